// problem+json (RFC 9457) and the stored header form; see http.hpp.
#include "http.hpp"

#include "idem/client.hpp"

#include <cctype>
#include <nlohmann/json.hpp>

namespace idem {
namespace {

constexpr const char* kOrdered = "@ordered";

bool is_token(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (std::isalnum(c)) continue;
    if (std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) == std::string_view::npos) return false;
  }
  return true;
}

struct Mapping {
  int status;
  const char* title;
  bool retry_after;
};

Mapping mapping_of(const ClientError& e, const ClientOptions& options) {
  const std::string& n = e.name();
  if (n == "ERR_IDEMPOTENCY_KEY_MISSING") return {400, "Idempotency-Key missing", false};
  if (n == "ERR_IDEMPOTENCY_KEY_INVALID") return {400, "Idempotency-Key invalid", false};
  if (n == "ERR_IDEMPOTENCY_IN_PROGRESS") return {409, "Request in progress", true};
  if (n == "ERR_IDEMPOTENCY_PAYLOAD_MISMATCH") {
    return {options.profile == Profile::reference ? 409 : 422, "Idempotency-Key reused with a different payload", false};
  }
  if (n == "ERR_IDEMPOTENCY_KEY_REUSED") return {422, "Idempotency-Key reused for another request", false};
  if (n == "ERR_LEASE_LOST") return {503, "Lease lost", true};
  if (n == "ERR_INVALID_TRANSITION") return {409, "Invalid state transition", false};
  if (n == "ERR_NON_ATOMIC_IDEMPOTENCY_STORE") return {503, "Idempotency store not durable", false};
  if (n == "ERR_PAYLOAD_NUMBER_PRECISION") return {400, "Number cannot be fingerprinted exactly", false};
  if (n == "ERR_PAYLOAD_JSON_INVALID") return {400, "Invalid JSON body", false};
  if (n == "ERR_PAYLOAD_TOO_LARGE") return {413, "Body too large", false};
  if (n == "ERR_JSON_POINTER_INVALID") return {400, "Invalid fingerprint exclusion", false};
  if (n == "ERR_ARGUMENT_INVALID") {
    // The key-length settings contradict each other: no key can be valid, the server's fault.
    if (e.detail().rfind("server misconfiguration", 0) == 0) return {500, "Server misconfiguration", false};
    return {400, "Invalid argument", false};
  }
  // The service's database role is bound to other tenants: its configuration, not the caller's.
  if (n == "ERR_TENANT_FORBIDDEN") return {403, "Tenant forbidden", false};
  if (n == "ERR_CLIENT_OUTCOME_UNKNOWN") return {503, "Outcome unknown", true};
  // Class 08 from the server itself: a node it needed (a Citus worker) could not be reached.
  if (n == "ERR_CLIENT_CONNECTION_LOST" || n == "ERR_CLIENT_POOL_TIMEOUT" || n == "ERR_OUT_OF_MEMORY" ||
      e.sqlstate() == "40001" || e.sqlstate() == "40P01" || e.sqlstate().rfind("08", 0) == 0) {
    return {503, "Service unavailable", true};
  }
  return {500, "Internal error", false};
}

}  // namespace

const std::string* Response::header(std::string_view name) const {
  for (const Header& h : headers) {
    if (h.name.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < name.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(h.name[i])) == std::tolower(static_cast<unsigned char>(name[i]));
    }
    if (same) return &h.value;
  }
  return nullptr;
}

Response problem_response(int status, const std::string& code, const std::string& title, const std::string& detail,
                          const std::string& type_base) {
  return problem_response(status, code, title, detail, Stored::unsaid, type_base);
}

Response problem_response(int status, const std::string& code, const std::string& title, const std::string& detail,
                          Stored stored, const std::string& type_base) {
  nlohmann::ordered_json body;
  body["type"] = type_base + code;
  body["title"] = title;
  body["status"] = status;
  body["detail"] = detail;
  body["code"] = code;
  if (stored != Stored::unsaid) body["stored"] = stored == Stored::yes;
  Response r;
  r.status = status;
  r.headers.push_back({"Content-Type", "application/problem+json"});
  // A server message is not ours to trust as UTF-8: replace what is not, rather than throw.
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

namespace {

// The detail an HTTP client reads. A 500 says nothing of the database's internals; ours (IK...)
// say what to do. Some messages carry what is the service's log's (what() keeps them), not its
// client's: ERR_LEASE_LOST names the key's digest and attempt numbers, a lost connection libpq's
// message with the database's host and port, a pool timeout the pool's settings.
std::string public_detail(const ClientError& error, const Mapping& m) {
  const std::string& n = error.name();
  if (n == "ERR_LEASE_LOST") {
    return "this attempt lost its hold on the Idempotency-Key before recording its result (it took longer than its "
           "lease and another attempt took the key over, or the key was resolved meanwhile); retry the same request "
           "with the same Idempotency-Key after Retry-After seconds: it gets the recorded answer, or 409 while the "
           "other attempt still runs";
  }
  if (n == "ERR_CLIENT_CONNECTION_LOST") {
    return "the service lost its database connection before anything was committed; retry the same request with "
           "the same Idempotency-Key after Retry-After seconds";
  }
  if (error.sqlstate().rfind("08", 0) == 0 && n.rfind("ERR_CLIENT_", 0) != 0) {
    return "a database node this request needs could not be reached and nothing was committed; retry the same "
           "request with the same Idempotency-Key after Retry-After seconds";
  }
  if (n == "ERR_CLIENT_POOL_TIMEOUT") {
    return "the service had no free database connection in time and did nothing; retry the same request with the "
           "same Idempotency-Key after Retry-After seconds";
  }
  const bool ours = error.sqlstate().rfind("IK", 0) == 0 || error.name().rfind("ERR_CLIENT_", 0) == 0;
  return ours || m.status != 500 ? error.detail() : "the request could not be completed";
}

}  // namespace

Response problem_response(const ClientError& error, const ClientOptions& options) {
  const Mapping m = mapping_of(error, options);
  // A ClientError means nothing was recorded, except that a COMMIT lost on its way may have been.
  const Stored stored = dynamic_cast<const OutcomeUnknown*>(&error) ? Stored::unsaid : Stored::no;
  Response r = problem_response(m.status, error.name(), m.title, public_detail(error, m), stored,
                                options.problem_type_base);
  if (m.retry_after) r.headers.push_back({"Retry-After", std::to_string(options.retry_after.count())});
  return r;
}

namespace http {

std::string encode_headers(const std::vector<Header>& headers) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const Header& h : headers) {
    if (!is_token(h.name)) {
      throw InvalidArgument("ERR_ARGUMENT_INVALID", "IK012", "response header name \"" + h.name + "\" is not an HTTP token");
    }
    if (h.value.find_first_of(std::string("\r\n\0", 3)) != std::string::npos) {
      throw InvalidArgument("ERR_ARGUMENT_INVALID", "IK012", "response header " + h.name + " has CR, LF or NUL in its value");
    }
    pairs.push_back({h.name, h.value});
  }
  nlohmann::json doc = nlohmann::json::object();
  doc[kOrdered] = std::move(pairs);
  try {
    return doc.dump();
  } catch (const nlohmann::json::type_error& e) {
    throw InvalidArgument("ERR_ARGUMENT_INVALID", "IK012", std::string("response headers are not UTF-8: ") + e.what());
  }
}

std::vector<Header> decode_headers(const std::string& json) {
  std::vector<Header> out;
  const auto doc = nlohmann::ordered_json::parse(json);
  if (!doc.is_object()) return out;
  const auto value_text = [](const nlohmann::ordered_json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  if (doc.size() == 1 && doc.contains(kOrdered) && doc[kOrdered].is_array()) {
    for (const auto& pair : doc[kOrdered]) {
      if (pair.is_array() && pair.size() == 2 && pair[0].is_string()) out.push_back({pair[0].get<std::string>(), value_text(pair[1])});
    }
    return out;
  }
  for (const auto& [name, value] : doc.items()) {
    if (value.is_array()) {
      for (const auto& v : value) out.push_back({name, value_text(v)});
    } else {
      out.push_back({name, value_text(value)});
    }
  }
  return out;
}

Response in_progress(const ClientOptions& options, long retry_after_seconds) {
  Response r = problem_response(409, "ERR_IDEMPOTENCY_IN_PROGRESS", "Request in progress",
                                "a request with this Idempotency-Key is still being processed; retry the same request "
                                "with the same key after Retry-After seconds",
                                Stored::no, options.problem_type_base);
  r.headers.push_back({"Retry-After", std::to_string(retry_after_seconds)});
  return r;
}

Response mismatch(const ClientOptions& options, const std::vector<std::string>& differs) {
  std::string named;
  // "" is the root's pointer: the body's shape changed (an object became an array).
  for (const std::string& d : differs) named += (named.empty() ? "" : ", ") + (d.empty() ? std::string("the body's root") : d);
  Response r = problem_response(options.profile == Profile::reference ? 409 : 422, "ERR_IDEMPOTENCY_PAYLOAD_MISMATCH",
                                "Idempotency-Key reused with a different payload",
                                "this Idempotency-Key was used with a different request" +
                                    (named.empty() ? std::string() : " (it differs in " + named + ")") +
                                    "; use a new key for a new request",
                                Stored::no, options.problem_type_base);
  if (differs.empty()) return r;
  nlohmann::ordered_json body = nlohmann::ordered_json::parse(r.body);
  body["differs"] = differs;
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

Response key_reused(const ClientOptions& options, const std::vector<std::string>& differs) {
  std::string what;
  for (const std::string& d : differs) {
    const std::string word = d == "resource" ? "route" : d;
    what += what.empty() ? word : " and " + word;
  }
  Response r = problem_response(422, "ERR_IDEMPOTENCY_KEY_REUSED", "Idempotency-Key reused for another request",
                                "this Idempotency-Key was first used " + (what.empty() ? std::string("elsewhere") : "with another " + what) +
                                    "; nothing was executed. Use a new key for each request",
                                Stored::no, options.problem_type_base);
  nlohmann::ordered_json body = nlohmann::ordered_json::parse(r.body);
  body["differs"] = differs;
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

}  // namespace http
}  // namespace idem
