#include "driver.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <pqxx/pqxx>

#include "processor_export.hpp"

namespace demo {
namespace {

httplib::Client client_for(const std::string& url, int timeout_s) {
  httplib::Client c(url);
  c.set_connection_timeout(timeout_s, 0);
  c.set_read_timeout(timeout_s, 0);
  return c;
}

Reply reply_of(const httplib::Result& r) {
  Reply out;
  if (!r) return out;
  out.status = r->status;
  out.body = r->body;
  out.headers = r->headers;
  return out;
}

}  // namespace

std::string Reply::header(const std::string& name) const {
  const auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

nlohmann::json Reply::json() const { return nlohmann::json::parse(body, nullptr, false); }

Driver::Driver(Config config) : config_(std::move(config)) { started_at_ = sql("SELECT now()::text"); }

std::vector<std::string> Driver::reconcile() {
  pqxx::connection conn(config_.db_url);
  const std::int64_t since = std::stoll(sql("SELECT floor(extract(epoch FROM '" + started_at_ + "'::timestamptz))::bigint"));
  reconcile::load_export(conn, config_.processor_url, "processor_export", since);
  pqxx::nontransaction tx(conn);
  std::vector<std::string> out;
  for (const auto& row : tx.exec_params("SELECT kind || ' ' || object_id FROM idem.reconcile('processor_export', $1)", started_at_))
    out.push_back(row[0].c_str());
  return out;
}

Reply Driver::post(const std::string& path, const std::optional<std::string>& key, const std::string& body,
                   const std::optional<std::string>& token, const httplib::Headers& extra) {
  auto c = client_for(config_.service_url, 10);
  httplib::Headers h = extra;
  if (token) h.emplace("Authorization", "Bearer " + *token);
  if (key) h.emplace("Idempotency-Key", *key);
  return reply_of(c.Post(path.c_str(), h, body, "application/json"));
}

Reply Driver::processor(const std::string& method, const std::string& path, const std::string& body) {
  auto c = client_for(config_.processor_url, 10);
  return reply_of(method == "GET" ? c.Get(path.c_str()) : c.Post(path.c_str(), body, "application/json"));
}

std::string Driver::sql(const std::string& query) {
  pqxx::connection conn(config_.db_url);
  pqxx::nontransaction tx(conn);
  const pqxx::result r = tx.exec(query);
  return r.empty() || r[0][0].is_null() ? "" : r[0][0].c_str();
}

void Driver::stack(const std::string& args) {
  const std::string cmd = config_.stack + " " + args;
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
}

bool Driver::check(const std::string& step, bool ok, const std::string& expected, const std::string& got) {
  std::lock_guard<std::mutex> lock(mutex_);
  rows_.push_back({step, expected, got, ok});
  if (!ok) {
    ++failures_;
    std::fprintf(stderr, "MISMATCH %s: expected %s, got %s\n", step.c_str(), expected.c_str(), got.c_str());
  }
  return ok;
}

bool Driver::check(const std::string& step, const std::string& expected, const std::string& got) {
  return check(step, expected == got, expected, got);
}

void Driver::note(const std::string& step, const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  rows_.push_back({step, "", what, true});
}

void Driver::print_table() const {
  std::size_t w1 = 4, w2 = 8;
  for (const Row& r : rows_) {
    w1 = std::max(w1, r.step.size());
    w2 = std::max(w2, r.expected.size());
  }
  std::printf("\n%-*s  %-*s  %s\n", static_cast<int>(w1), "step", static_cast<int>(w2), "expected", "got");
  for (const Row& r : rows_) {
    std::printf("%-*s  %-*s  %s%s\n", static_cast<int>(w1), r.step.c_str(), static_cast<int>(w2), r.expected.c_str(),
                r.got.c_str(), r.ok ? "" : "   <-- MISMATCH");
  }
}

void Driver::remember_order(const std::string& session, const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  orders_[session] = key;
}

int Driver::charges_for(const std::string& session) {
  const Reply r = processor("GET", "/v1/charges");
  int n = 0;
  for (const auto& c : r.json().value("data", nlohmann::json::array())) {
    const std::string status = c.value("status", "");
    if (c.value("metadata", nlohmann::json::object()).value("session_id", "") == session &&
        (status == "succeeded" || status == "requires_action")) {
      ++n;
    }
  }
  return n;
}

std::string Driver::unique(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return prefix + "-" + std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) + "-" +
         std::to_string(++counter_);
}

}  // namespace demo
