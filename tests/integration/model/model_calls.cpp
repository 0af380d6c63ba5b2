// The statement helpers of the model test: running a statement, reading columns, printing bytes
// and responses, and parsing an acquire's row.
#include "tests/integration/model/model_calls.hpp"

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

namespace idem::it::model {

Reply call(Connection& c, const std::string& sql, const Params& params) {
  Reply out;
  const auto start = Clock::now();
  try {
    out.rows.emplace(c.exec(sql, params));
  } catch (const DbError& e) {
    out.state = e.in_doubt() ? "in-doubt" : e.sqlstate();
    out.error = e.what();
    if (out.state.empty()) out.state = "(none)";
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

std::optional<std::string> opt_text(const Result& r, const char* column) {
  if (r.is_null(0, column)) return std::nullopt;
  return r.text(0, column);
}

std::optional<std::int64_t> opt_int(const Result& r, const char* column) {
  if (r.is_null(0, column)) return std::nullopt;
  return std::stoll(r.text(0, column));
}

std::string interval_of(Micros us) { return std::to_string(us / 1000) + " milliseconds"; }

std::string printable(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string opt_str(const std::optional<std::string>& s) { return s ? "'" + printable(*s) + "'" : "NULL"; }

std::string describe(const Response& r) {
  return "status=" + std::to_string(r.status) + " headers=" + r.headers + " body='" + printable(r.body) +
         "' order_id=" + opt_str(r.order_id);
}

AcquireRow parse_acquire(const Result& r) {
  AcquireRow a;
  a.t0 = std::stoll(r.text(0, "t0"));
  a.t1 = std::stoll(r.text(0, "t1"));
  a.outcome = r.text(0, "outcome");
  a.handle = r.is_null(0, "handle") ? "" : r.text(0, "handle");
  a.attempt = opt_int(r, "attempt");
  a.generation = opt_int(r, "generation");
  a.retry_after = opt_int(r, "retry_after");
  a.lease_end = opt_int(r, "lease_end");
  a.rp = opt_text(r, "recovery_point");
  a.rdata = opt_text(r, "recovery_data");
  a.any_response_column = !r.is_null(0, "response_status") || !r.is_null(0, "response_headers") ||
                          !r.is_null(0, "response_body") || !r.is_null(0, "order_id");
  if (!r.is_null(0, "response_status")) {
    Response resp;
    resp.status = r.integer(0, "response_status");
    resp.headers = r.is_null(0, "response_headers") ? "<NULL>" : r.text(0, "response_headers");
    resp.body = r.is_null(0, "response_body") ? "<NULL>" : r.bytes(0, "response_body");
    resp.order_id = opt_text(r, "order_id");
    a.resp = resp;
  }
  return a;
}

}  // namespace idem::it::model
