// Requests and responses of the failover workload; see key_spec.hpp.
#include "tests/failover/key_spec.hpp"

#include <random>
#include <stdexcept>

namespace idem::failover {
namespace {

std::mt19937_64& rng() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

std::string random_hex(std::size_t digits) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  std::uniform_int_distribution<int> digit(0, 15);
  for (std::size_t i = 0; i < digits; ++i) out += kHex[digit(rng())];
  return out;
}

}  // namespace

const char* kind_name(Kind kind) { return kind == Kind::run ? "run" : "lease"; }

Kind kind_of(const std::string& name) {
  if (name == "run") return Kind::run;
  if (name == "lease") return Kind::lease;
  throw std::invalid_argument("unknown request kind: " + name);
}

KeySpec new_key(int round, Kind kind) {
  KeySpec spec;
  spec.kind = kind;
  spec.round = round;
  spec.key = "fo-" + std::to_string(round) + "-" + random_hex(24);
  const auto cents = std::uniform_int_distribution<int>(100, 99999)(rng());
  spec.body = R"({"amount_cents":)" + std::to_string(cents) + R"(,"currency":"EUR","reference":")" + spec.key + R"("})";
  return spec;
}

Request request_of(const KeySpec& spec) {
  Request r;
  r.tenant = "acme";
  r.caller = "failover-workload";
  r.method = "POST";
  // The kinds use different routes: a key is only ever sent with its own kind's route.
  r.route = spec.kind == Kind::run ? "/v1/payments" : "/v1/refunds";
  r.mutation_type = spec.kind == Kind::run ? "create" : "refund";
  r.idempotency_key = spec.key;
  r.body = spec.body;
  return r;
}

const char* const kExecutionsTable =
    "CREATE TABLE IF NOT EXISTS failover_executions ("
    " key text NOT NULL, kind text NOT NULL, exec_id text NOT NULL, round integer NOT NULL,"
    " executed_at timestamptz NOT NULL DEFAULT clock_timestamp())";
const char* const kInsertExecution =
    "INSERT INTO failover_executions (key, kind, exec_id, round) VALUES ($1, $2, $3, $4::integer)";

std::string new_execution_id() { return "ex_" + random_hex(20); }

Response response_for(const KeySpec& spec, const std::string& execution_id, const std::string& charge_id) {
  Response r;
  r.status = 201;
  r.headers = {{"Content-Type", "application/octet-stream"},
               {"X-Execution-Id", execution_id},
               {"Set-Cookie", "a=1"},
               {"Set-Cookie", "b=2"}};
  r.body = spec.key + " " + execution_id + " " + charge_id + std::string("\0\xff\r\n\\x00", 8);
  return r;
}

std::string Answer::execution_id() const {
  for (const Header& h : headers) {
    if (h.name == "X-Execution-Id") return h.value;
  }
  return "";
}

Answer answer_of(const Response& response, bool* replayed) {
  Answer a{response.status, response.headers, response.body};
  const std::size_t n = a.headers.size();
  const bool replay = n >= 2 && a.headers[n - 2] == Header{"X-Cache-Lookup", "IDEMPOTENT-HIT"} &&
                      a.headers[n - 1] == Header{"Idempotent-Replayed", "true"};
  if (replay) a.headers.resize(n - 2);
  if (replayed) *replayed = replay;
  return a;
}

std::string to_hex(const std::string& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}

std::string from_hex(const std::string& hex) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw std::invalid_argument("not a lower-case hex digit");
  };
  if (hex.size() % 2) throw std::invalid_argument("odd number of hex digits");
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) out += static_cast<char>(digit(hex[i]) * 16 + digit(hex[i + 1]));
  return out;
}

}  // namespace idem::failover
