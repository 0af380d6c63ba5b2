#include "extension/transitions/checked_rows.hpp"

#include <cstring>
#include <deque>
#include <string>

namespace idem::transitions::checked_rows {
namespace {

struct Entry {
  Oid relid;
  std::string row_key;
  bool has_key;
  std::string to;
  bool guard_result;
};

// A statement's AFTER triggers fire at its end: a row's entry waits at most that long, unless the
// row was not written (ON CONFLICT DO NOTHING, a later BEFORE trigger's NULL). Bounded, and
// dropped when another transaction starts.
constexpr std::size_t kMaxEntries = 10000;
std::deque<Entry> entries;
LocalTransactionId entries_of = InvalidLocalTransactionId;

void start_if_new_transaction() {
  if (entries_of != MyProc->lxid) {
    entries.clear();
    entries_of = MyProc->lxid;
  }
}

bool same(const Entry& e, Oid relid, const char* row_key, const char* to) {
  return e.relid == relid && e.has_key == (row_key != nullptr) && (row_key == nullptr || e.row_key == row_key) && e.to == to;
}

}  // namespace

void remember(Oid relid, const char* row_key, const char* to, bool guard_result) {
  start_if_new_transaction();
  if (entries.size() >= kMaxEntries) entries.pop_front();
  entries.push_back(Entry{relid, row_key ? row_key : "", row_key != nullptr, to, guard_result});
}

std::optional<bool> take(Oid relid, const char* row_key, const char* to) {
  start_if_new_transaction();
  for (auto it = entries.begin(); it != entries.end(); ++it) {
    if (same(*it, relid, row_key, to)) {
      const bool result = it->guard_result;
      entries.erase(it);
      return result;
    }
  }
  return std::nullopt;
}

}  // namespace idem::transitions::checked_rows
