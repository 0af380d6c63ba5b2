// Writing and reading the workload's journal; see journal.hpp.
#include "tests/failover/journal.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace idem::failover {
namespace {

using nlohmann::json;

std::string file_name(int round, const std::string& phase) {
  char number[16];
  std::snprintf(number, sizeof number, "%03d", round);
  return std::string("round-") + number + "-" + phase + ".jsonl";
}

json headers_json(const std::vector<Header>& headers) {
  json out = json::array();
  for (const Header& h : headers) out.push_back({h.name, h.value});
  return out;
}

Answer answer_json(const json& j) {
  Answer a;
  a.status = j.at("status").get<int>();
  for (const auto& h : j.at("headers")) a.headers.push_back({h.at(0).get<std::string>(), h.at(1).get<std::string>()});
  a.body = from_hex(j.at("body_hex").get<std::string>());
  return a;
}

// One journal line into the history.
void apply_line(History& history, const json& j) {
  const std::string event = j.at("e").get<std::string>();
  if (event == "verified") {
    history.replays_checked += j.at("replays").get<long>();
    ++history.verifications;
    return;
  }
  const std::string key = j.at("key").get<std::string>();
  if (event == "key") {
    KeyHistory& k = history.keys[key];
    k.spec = KeySpec{key, kind_of(j.at("kind").get<std::string>()), j.at("body").get<std::string>(),
                     j.at("round").get<int>()};
    return;
  }
  const auto found = history.keys.find(key);
  if (found == history.keys.end()) throw std::runtime_error("journal: '" + event + "' for unknown key " + key);
  KeyHistory& k = found->second;
  k.repeated_steps += j.value("repeated_steps", 0);
  if (event == "ack") {
    k.answers.push_back(answer_json(j));
  } else if (event == "unresolved" || event == "fenced") {
    ++k.unresolved;
    if (j.value("outcome_unknown", false)) ++k.outcome_unknown;
    if (j.contains("in_doubt_execution")) k.in_doubt_executions.push_back(j["in_doubt_execution"].get<std::string>());
    if (event == "fenced") ++k.fenced;
  } else if (event == "unexpected") {
    k.unexpected.push_back(j.at("why").get<std::string>());
  } else if (event == "lost") {
    k.lost = j.at("how").get<std::string>();
  } else {
    throw std::runtime_error("journal: unknown event " + event);
  }
}

}  // namespace

Journal::Journal(const std::string& dir, int round, const std::string& phase)
    : out_(dir + "/" + file_name(round, phase), std::ios::app), path_(dir + "/" + file_name(round, phase)),
      round_(round) {
  if (!out_) throw std::runtime_error("cannot open journal " + path_);
}

void Journal::write(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  out_ << line << '\n';
  out_.flush();  // in the file before the caller moves on: the process may be stopped any time
  if (!out_) throw std::runtime_error("cannot write journal " + path_);
}

void Journal::key(const KeySpec& spec) {
  const json j{{"e", "key"}, {"key", spec.key}, {"kind", kind_name(spec.kind)}, {"body", spec.body},
               {"round", spec.round}};
  write(j.dump());
}

void Journal::outcome(const KeySpec& spec, const Outcome& o) {
  json j{{"key", spec.key}, {"round", round_}};
  if (o.repeated_steps > 0) j["repeated_steps"] = o.repeated_steps;
  switch (o.type) {
    case Outcome::Type::busy: return;
    case Outcome::Type::acknowledged:
      j["e"] = "ack";
      j["status"] = o.answer.status;
      j["headers"] = headers_json(o.answer.headers);
      j["body_hex"] = to_hex(o.answer.body);
      j["replayed"] = o.replayed;
      break;
    case Outcome::Type::unresolved: j["e"] = "unresolved"; break;
    case Outcome::Type::fenced: j["e"] = "fenced"; break;
    case Outcome::Type::unexpected: j["e"] = "unexpected"; break;
  }
  if (o.type != Outcome::Type::acknowledged) {
    j["why"] = o.why;
    j["outcome_unknown"] = o.outcome_unknown;
    if (!o.in_doubt_execution.empty()) j["in_doubt_execution"] = o.in_doubt_execution;
  }
  write(j.dump());
}

void Journal::lost(const std::string& key, const std::string& how) {
  write(json{{"e", "lost"}, {"key", key}, {"how", how}, {"round", round_}}.dump());
}

void Journal::verified(long replays_checked) {
  write(json{{"e", "verified"}, {"replays", replays_checked}, {"round", round_}}.dump());
}

History load_history(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("round-", 0) == 0 && entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  History history;
  for (const auto& path : files) {
    std::ifstream in(path);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (line.empty()) continue;
      try {
        apply_line(history, json::parse(line));
      } catch (const std::exception& e) {
        throw std::runtime_error(path.string() + ":" + std::to_string(number) + ": " + e.what());
      }
    }
  }
  return history;
}

}  // namespace idem::failover
