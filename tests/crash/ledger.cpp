// The crash workload's record of acknowledged results and failures (ledger.hpp).
#include "ledger.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "responses.hpp"

namespace crash {
namespace {

std::string hex(const std::string& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}

nlohmann::json headers_json(const idem::Response& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& h : r.headers) out.push_back({h.name, h.value});
  return out;
}

}  // namespace

const char* failure_name(Failure f) {
  switch (f) {
    case Failure::outcome_unknown: return "outcome_unknown";
    case Failure::connection_lost: return "connection_lost";
    case Failure::pool_timeout: return "pool_timeout";
    case Failure::lease_lost: return "lease_lost";
    case Failure::database_error: return "database_error";
    case Failure::other: return "other";
  }
  return "?";
}

Ledger::Ledger(const std::string& path) : file_(std::fopen(path.c_str(), "a")) {
  if (!file_) throw std::runtime_error("cannot open the ledger file " + path);
}

Ledger::~Ledger() { std::fclose(file_); }

// Under mutex_. Flushed line by line: the file is the evidence when a run fails.
void Ledger::write_line(const std::string& line) {
  std::fputs(line.c_str(), file_);
  std::fputc('\n', file_);
  std::fflush(file_);
}

void Ledger::note(const std::string& event, const std::string& fields_json_object) {
  nlohmann::json line = nlohmann::json::parse(fields_json_object);
  line["event"] = event;
  std::lock_guard<std::mutex> lock(mutex_);
  write_line(line.dump());
}

Ledger::Entry& Ledger::entry(const KeySpec& key) {
  auto [it, inserted] = entries_.try_emplace(key.name);
  if (inserted) it->second.key = key;
  return it->second;
}

void Ledger::touch(const KeySpec& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  entry(key);
  ++figures_.requests;
}

void Ledger::failed(const KeySpec& key, Failure why, const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++figures_.failures[static_cast<int>(why)];
  Entry& e = entry(key);
  // A failed request for a key whose result is known changes nothing; one for any other key
  // leaves it unresolved.
  const bool unresolved = !e.result;
  if (unresolved) {
    e.failed = true;
    if (why == Failure::outcome_unknown) e.in_doubt = true;
  }
  write_line(nlohmann::json{{"event", unresolved ? "unresolved" : "failed_after_result"},
                            {"key", key.name},
                            {"failure", failure_name(why)},
                            {"what", what}}
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void Ledger::in_progress() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++figures_.in_progress;
}

void Ledger::mismatch_refused() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++figures_.mismatches_refused;
}

void Ledger::acknowledged(const KeySpec& key, const idem::Response& answer) {
  idem::Response r = answer;
  const bool replayed = strip_replay_headers(r);
  const auto seq = order_seq_of(r);
  if (!seq || !same_response(r, response_for(key, *seq))) {
    violation(key.name + ": the answer is not this key's handler response: " + describe(answer));
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  ++figures_.acknowledged;
  ++(replayed ? figures_.replays : figures_.executions);
  Entry& e = entry(key);
  if (e.result) {
    // Equal bytes are the same execution, whichever answer arrived first (a replay can overtake
    // the executing call's return). Different bytes name another row: the key ran twice.
    if (same_response(r, e.result->response)) return;
    const std::string first = describe(e.result->response);
    lock.unlock();
    if (replayed) {
      violation(key.name + ": replayed other bytes than its first answer: first " + first + ", now " +
                describe(answer));
    } else {
      double_execution(key.name + ": executed again (order " + std::to_string(*seq) + ") after its answer " + first);
    }
    return;
  }
  e.result = Acknowledged{key, r, *seq};
  e.acknowledged_round = round_;
  acknowledged_names_.push_back(key.name);
  ++figures_.keys_acknowledged;
  if (e.failed) {
    ++figures_.unresolved_resolved;
    if (e.in_doubt) {
      ++figures_.in_doubt_resolved;
      if (replayed) ++figures_.in_doubt_committed;
    }
  }
  write_line(nlohmann::json{{"event", "ack"},
                            {"key", key.name},
                            {"mode", key.mode == Mode::lease ? "lease" : "run"},
                            {"epoch", key.epoch},
                            {"replayed", replayed},
                            {"after_failure", e.failed},
                            {"status", r.status},
                            {"headers", headers_json(r)},
                            {"body_hex", hex(r.body)}}
                 .dump());
}

void Ledger::violation(const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++figures_.violations;
  std::fprintf(stderr, "crash-workload: VIOLATION: %s\n", what.c_str());
  write_line(nlohmann::json{{"event", "violation"}, {"what", what}}.dump(-1, ' ', false,
                                                                         nlohmann::json::error_handler_t::replace));
}

void Ledger::double_execution(const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++figures_.double_executions;
  }
  violation("double execution: " + what);
}

void Ledger::replay_verified() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++figures_.replays_verified;
}

void Ledger::rows_checked(std::uint64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  figures_.rows_checked += n;
}

bool Ledger::holder_checked(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(key);
  return it != entries_.end() && it->second.holder_checked;
}

void Ledger::holder_checked(const KeySpec& key, bool resumed_at_charged) {
  std::lock_guard<std::mutex> lock(mutex_);
  entry(key).holder_checked = true;
  if (resumed_at_charged) ++figures_.holders_resumed;
  write_line(nlohmann::json{{"event", "holder_checked"}, {"key", key.name}, {"resumed_at_charged", resumed_at_charged}}
                 .dump());
}

void Ledger::lease_resumed(const KeySpec& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++figures_.lease_resumes;
  write_line(nlohmann::json{{"event", "lease_resumed"}, {"key", key.name}}.dump());
}

std::vector<KeySpec> Ledger::open_keys() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<KeySpec> out;
  for (const auto& [name, e] : entries_) {
    if (!e.result) out.push_back(e.key);
  }
  return out;
}

std::optional<KeySpec> Ledger::some_acknowledged(std::uint64_t random) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (acknowledged_names_.empty()) return std::nullopt;
  return entries_.at(acknowledged_names_[random % acknowledged_names_.size()]).key;
}

std::vector<Acknowledged> Ledger::all_acknowledged() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Acknowledged> out;
  for (const auto& [name, e] : entries_) {
    if (e.result) out.push_back(*e.result);
  }
  return out;
}

std::vector<Acknowledged> Ledger::acknowledged_this_round() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Acknowledged> out;
  for (const auto& [name, e] : entries_) {
    if (e.result && e.acknowledged_round == round_) out.push_back(*e.result);
  }
  return out;
}

void Ledger::next_round() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++round_;
}

Figures Ledger::figures() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return figures_;
}

}  // namespace crash
