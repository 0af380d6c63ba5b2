// ModelRun: reporting (labels, traces, violations), what a session sees of the model, running
// statements, and cross-checking idem.keys against the committed model.
#include "tests/integration/model/model_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace idem::it::model {

// ------------------------------------------------------------------------------ reporting

std::string ModelRun::rel(Micros t) const {
  if (t >= kNever / 2) return "never";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1fms", static_cast<double>(t - base_) / 1000.0);
  return buf;
}

std::string ModelRun::klabel(int k) const {
  return "k" + std::to_string(k) + " (" + keys_[k].tenant + "/" + keys_[k].name + ")";
}

std::string ModelRun::describe(const Rec& r) const {
  if (!r.exists) return "absent (generation high-water mark " + std::to_string(r.hwm) + ")";
  const Window h = history_at(r);
  std::string s = std::string(st_name(r.status)) + " gen=" + std::to_string(r.gen) +
                  " attempt=" + std::to_string(r.attempt) + " payload=v" + std::to_string(r.variant) +
                  " lease=" + std::to_string(r.lease / 1000) + "ms ttl=" + std::to_string(r.ttl / 1000) + "ms";
  if (r.status == St::in_progress) s += " lease_end=" + rel(r.lease_end);
  if (r.status != St::in_progress) s += " ended=[" + rel(r.end_lo) + "," + rel(r.end_hi) + "]";
  s += " checkpoint=" + (r.checkpointed ? opt_str(r.rp) + " data=" + opt_str(r.rdata) : std::string("none"));
  if (r.status == St::resolved) s += " response{" + model::describe(r.resp) + "}";
  s += " history=[" + rel(h.lo) + "," + rel(h.hi) + "] ver=" + std::to_string(r.ver);
  return s;
}

std::string ModelRun::describe_key(int k) const {
  std::string s = "  committed: " + describe(committed_[k]) + "\n";
  for (const Session& o : sessions_) {
    if (!o.tx) continue;
    const auto it = o.tx->writes.find(k);
    if (it != o.tx->writes.end()) {
      s += "  open in " + o.name + " tx" + std::to_string(o.tx->serial) + ": " + describe(it->second) + "\n";
    }
    if (o.tx->snapshot && it == o.tx->writes.end()) {
      const Rec& snap = (*o.tx->snapshot)[k];
      if (snap.ver != committed_[k].ver) {
        s += "  snapshot of " + o.name + " tx" + std::to_string(o.tx->serial) + ": " + describe(snap) + "\n";
      }
    }
  }
  for (const Prepared& p : prepared_) {
    const auto it = p.tx.writes.find(k);
    if (it != p.tx.writes.end())
      s += "  prepared " + p.gid + " (from " + p.from + "): " + describe(it->second) + "\n";
  }
  if (purge_deleted_.count(k)) s += "  deleted by the open purge transaction\n";
  return s;
}

void ModelRun::note(const std::string& line) {
  trace_.push_back("step " + std::to_string(step_) + ": " + line);
  if (trace_.size() > 80) trace_.pop_front();
}

void ModelRun::violation(const std::string& what, int k) {
  std::string msg =
      "model violation at step " + std::to_string(step_) + " (seed=" + std::to_string(seed_) + "): " + what + "\n";
  if (k >= 0) msg += "state of " + klabel(k) + ":\n" + describe_key(k);
  msg += "last steps:\n";
  for (const auto& line : trace_) msg += "  " + line + "\n";
  msg += counters() + "\nreplay with IDEM_MODEL_SEED=" + std::to_string(seed_);
  throw ModelViolation(msg);
}

// ------------------------------------------------------------------------------ model queries

const Rec& ModelRun::visible(const Session& s, int k) const {
  if (s.tx) {
    const auto it = s.tx->writes.find(k);
    if (it != s.tx->writes.end()) return it->second;
    if (s.tx->snapshot) return (*s.tx->snapshot)[k];
  }
  return committed_[k];
}

// A snapshot older than the last committed change of the key (a write must fail with 40001).
bool ModelRun::snapshot_stale(const Session& s, int k) const {
  return s.tx && s.tx->snapshot && !owns(s, k) && (*s.tx->snapshot)[k].ver != committed_[k].ver;
}

// Who else holds the key: another session's open transaction, a prepared transaction, or the
// open purge transaction that deleted its record. "" when nobody.
std::string ModelRun::locker(const Session* s, int k, bool include_purge) const {
  for (const Session& o : sessions_) {
    if (&o == s || !o.tx) continue;
    if (o.tx->writes.count(k)) return o.name + " tx" + std::to_string(o.tx->serial);
  }
  for (const Prepared& p : prepared_) {
    if (p.tx.writes.count(k)) return "prepared " + p.gid;
  }
  if (include_purge && purge_deleted_.count(k)) return "the open purge transaction";
  return "";
}

Rec& ModelRun::writable(Session& s, int k) {
  auto it = s.tx->writes.find(k);
  if (it == s.tx->writes.end()) it = s.tx->writes.emplace(k, visible(s, k)).first;
  return it->second;
}

// ------------------------------------------------------------------------------ statements

Reply ModelRun::stmt(Connection& c, const std::string& sql, const Params& params) {
  ++statements_;
  return call(c, sql, params);
}

Result ModelRun::must(Connection& c, const std::string& sql, const std::string& who, const Params& params) {
  Reply r = stmt(c, sql, params);
  if (!r.ok())
    violation(who + ": " + sql.substr(0, 60) + " failed unexpectedly: SQLSTATE " + r.state + ": " + r.error);
  return std::move(*r.rows);
}

std::string ModelRun::txlabel(const Session& s) const {
  if (!s.tx) return s.name + " autocommit";
  return s.name + " tx" + std::to_string(s.tx->serial) + "[" + iso_short(s.tx->iso) + (s.tx->block ? "" : ",auto") +
         (s.tx->frames.empty() ? "" : ",sp" + std::to_string(s.tx->frames.size())) + "]";
}

void ModelRun::commit_writes(const std::map<int, Rec>& writes) {
  for (const auto& [k, r] : writes) {
    Rec c = r;
    c.hwm = std::max(committed_[k].hwm, r.exists ? r.gen : 0);
    c.ver = committed_[k].ver + 1;
    if (c.exists && c.status == St::resolved) responses_[k][c.gen] = c.resp;
    committed_[k] = std::move(c);
  }
}

std::map<std::string, std::array<std::string, 3>> ModelRun::read_rows(Connection& c) {
  const Result rows = must(c, kRows, "reading idem.keys");
  std::map<std::string, std::array<std::string, 3>> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out[rows.text(i, "tenant_id") + ":" + rows.text(i, "digest")] = {rows.text(i, "status"), rows.text(i, "attempt"),
                                                                     rows.text(i, "generation")};
  }
  return out;
}

// idem.keys (read from a separate connection) agrees with the committed model.
void ModelRun::cross_check(const std::vector<int>& ks) {
  const auto rows = read_rows(*observer_);
  for (int k : ks) {
    const Rec& m = committed_[k];
    const auto it = rows.find(keys_[k].handle);
    if (!m.exists && it == rows.end()) continue;
    if (m.exists != (it != rows.end())) {
      violation(std::string("idem.keys disagrees with the committed model for ") + klabel(k) + ": model " +
                    (m.exists ? "has a record" : "has none") + ", idem.keys " +
                    (it != rows.end() ? "has " + it->second[0] + " gen " + it->second[2] : std::string("has none")),
                k);
    }
    const auto& [status, attempt, gen] = it->second;
    if (status != st_name(m.status) || attempt != std::to_string(m.attempt) || gen != std::to_string(m.gen)) {
      violation("idem.keys disagrees with the committed model for " + klabel(k) + ": row " + status + " attempt " +
                    attempt + " gen " + gen,
                k);
    }
  }
}

void ModelRun::cross_check_all() {
  std::vector<int> all(kKeys);
  for (int k = 0; k < kKeys; ++k) all[k] = k;
  cross_check(all);
}

}  // namespace idem::it::model
