// The crash workload's requests, handler and responses (orders.hpp).
#include "orders.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "tests/support/split_mix64.hpp"

namespace crash {

const char* const kTenant = "crash";
const char* const kChargedPoint = "charged";

namespace {

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

long amount_cents(const KeySpec& key) { return 100 + static_cast<long>(fnv1a(key.name) % 100000); }

std::string hex8(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return std::string(buf, 8);
}

std::string charge_id(const KeySpec& key) { return "ch_" + hex8(fnv1a("charge:" + key.name)); }

std::string body_for(const KeySpec& key, long amount) {
  nlohmann::ordered_json body = {{"key", key.name}, {"amount_cents", amount}, {"currency", "EUR"}};
  return body.dump();
}

// 16 bytes only this key produces, with a NUL and a 0xff among them: replay must keep bytes.
std::string binary_tail(const KeySpec& key) {
  idem::testing::SplitMix64 rng(fnv1a(key.name));
  std::string tail(16, '\0');
  for (char& c : tail) c = static_cast<char>(rng.next() & 0xff);
  tail[rng.below(8)] = '\0';
  tail[8 + rng.below(8)] = static_cast<char>(0xff);
  return tail;
}

const char* route_of(Mode mode) { return mode == Mode::run ? "/v1/orders" : "/v1/charges"; }

}  // namespace

KeySpec pool_key(const std::string& run_id, int epoch, int index) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "crash-%s-e%03d-k%05d", run_id.c_str(), epoch, index);
  return KeySpec{buf, index % 3 == 2 ? Mode::lease : Mode::run, epoch, false};
}

idem::Request request_for(const KeySpec& key) {
  idem::Request r;
  r.tenant = kTenant;
  r.caller = "crash-workload";
  r.method = "POST";
  r.route = route_of(key.mode);
  r.idempotency_key = key.name;
  r.body = body_for(key, amount_cents(key));
  return r;
}

idem::Request mismatched_request_for(const KeySpec& key) {
  idem::Request r = request_for(key);
  r.body = body_for(key, amount_cents(key) + 1);
  return r;
}

std::string charge_data(const KeySpec& key) { return nlohmann::json{{"charge_id", charge_id(key)}}.dump(); }

bool is_charge_data(const KeySpec& key, const std::optional<std::string>& recovery_data) {
  if (!recovery_data) return false;
  const auto parsed = nlohmann::json::parse(*recovery_data, nullptr, false);
  return !parsed.is_discarded() && parsed == nlohmann::json::parse(charge_data(key));
}

idem::Response execute_order(idem::Attempt& attempt, const KeySpec& key, const std::string& run_id,
                             bool charged_here) {
  const bool lease = key.mode == Mode::lease;
  const auto rows = attempt.exec(
      "INSERT INTO crash_orders (run_id, key, mode, amount_cents, charge_id) VALUES ($1, $2, $3, $4, $5) RETURNING id",
      {run_id, key.name, lease ? "lease" : "run", std::to_string(amount_cents(key)),
       lease ? idem::SqlValue(charge_id(key)) : std::nullopt});
  const std::int64_t seq = std::stoll(rows.at(0).at(0).value());
  idem::Audit audit;
  audit.order_id = "ord-" + std::to_string(seq);
  if (lease) audit.handler_response = charge_data(key);
  audit.local_status = "paid";
  audit.handler_called = charged_here;
  attempt.record(audit);
  return response_for(key, seq);
}

idem::Response response_for(const KeySpec& key, std::int64_t order_seq) {
  const std::string seq = std::to_string(order_seq);
  const bool lease = key.mode == Mode::lease;
  idem::Response r;
  r.status = lease ? 200 : 201;
  r.headers = {{"Content-Type", "application/octet-stream"},
               {"Location", std::string(route_of(key.mode)) + "/" + seq},
               {"Set-Cookie", "order=" + seq},
               {"Set-Cookie", "key=" + hex8(fnv1a(key.name))},
               {"X-Note", "caf\xc3\xa9 \xe2\x9c\x93"}};  // UTF-8: "café ✓"
  if (lease) r.headers.push_back({"X-Charge-Id", charge_id(key)});
  r.body = "order " + seq + " for " + key.name + " amount " + std::to_string(amount_cents(key)) + "\n" +
           binary_tail(key);
  return r;
}

std::optional<std::int64_t> order_seq_of(const idem::Response& response) {
  const std::string* location = response.header("Location");
  if (!location) return std::nullopt;
  const auto slash = location->rfind('/');
  if (slash == std::string::npos || slash + 1 >= location->size()) return std::nullopt;
  try {
    return std::stoll(location->substr(slash + 1));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<std::string> create_table_sql() {
  // No UNIQUE on key on purpose: it would turn a double execution into a constraint error and
  // hide it; settle counts rows per key instead. The plain index serves that count.
  return {"CREATE TABLE IF NOT EXISTS crash_orders ("
          " id bigserial PRIMARY KEY, run_id text NOT NULL, key text NOT NULL, mode text NOT NULL,"
          " amount_cents bigint NOT NULL, charge_id text,"
          " executed_at timestamptz NOT NULL DEFAULT clock_timestamp())",
          "CREATE INDEX IF NOT EXISTS crash_orders_key ON crash_orders (run_id, key)"};
}

}  // namespace crash
