#include "http_glue.hpp"

#include <strings.h>

#include "idem/key_header.hpp"

namespace checkout {
namespace {

constexpr const char* kKeyHeader = "Idempotency-Key";

// Title and code of a status cpp-httplib answers by itself.
std::pair<const char*, const char*> framework_status(int status) {
  switch (status) {
    case 400: return {"Bad request", "ERR_REQUEST_MALFORMED"};
    case 404: return {"Not found", "ERR_NOT_FOUND"};
    case 405: return {"Method not allowed", "ERR_METHOD_NOT_ALLOWED"};
    case 413: return {"Body too large", "ERR_PAYLOAD_TOO_LARGE"};
    case 414: return {"URI too long", "ERR_URI_TOO_LONG"};
    case 416: return {"Range not satisfiable", "ERR_RANGE_NOT_SATISFIABLE"};
    default: return {"HTTP error", "ERR_HTTP"};
  }
}

idem::Response framework_problem(const httplib::Request& req, int status, const Routes& routes,
                                 std::size_t max_body_bytes) {
  std::string detail, allow;
  if (status == 404) {
    allow = routes.allowed(req.path);
    if (!allow.empty()) {
      status = 405;
      detail = req.method + " is not allowed on " + req.path + "; it takes " + allow;
    } else {
      detail = "no route answers " + req.method + " " + req.path +
               " (POST /checkout/{session_id}/complete, POST /v1/payments/{payment_id}/refunds, GET /health)";
    }
  } else if (status == 413) {
    detail = "request bodies are limited to " + std::to_string(max_body_bytes) + " bytes; this one is " +
             (req.has_header("Content-Length") ? req.get_header_value("Content-Length") : "larger") +
             ": nothing was recorded";
  } else if (status == 400) {
    detail = "the request could not be read as HTTP/1.1 (its request line, a header or its body)";
  } else {
    detail = "HTTP " + std::to_string(status);
  }
  const auto [title, code] = framework_status(status);
  idem::Response r = problem(status, code, title, detail, idem::Stored::no);
  if (!allow.empty()) r.headers.push_back({"Allow", allow});
  return r;
}

}  // namespace

std::optional<Principal> authenticate(const httplib::Request& req, httplib::Response& res, const std::string& secret) {
  auto who = verify_bearer(secret, req.get_header_value("Authorization"));
  if (!who) {
    send(problem(401, "ERR_UNAUTHENTICATED", "Unauthenticated",
                 "send Authorization: Bearer <token> (scripts/stack.sh token <tenant> <caller> mints one)",
                 idem::Stored::no),
         res);
    res.set_header("WWW-Authenticate", "Bearer");
  }
  return who;
}

std::variant<idem::Request, idem::Response> idem_request(const Principal& who, const httplib::Request& req,
                                                         const std::string& route, const std::string& mutation_type) {
  // Every line: cpp-httplib keeps them all, and two lines are a list, not the first one's key.
  std::vector<std::string> lines;
  for (std::size_t i = 0, n = req.get_header_value_count(kKeyHeader); i < n; ++i) {
    lines.push_back(req.get_header_value(kKeyHeader, i));
  }
  const idem::KeyHeader key = idem::parse_key_header(lines);
  if (key.refused()) return idem::key_header_problem(key);
  idem::Request r;
  r.tenant = who.tenant;
  r.caller = who.caller;
  r.method = req.method;
  r.route = route;
  r.idempotency_key = key.key;
  r.body = req.body;
  r.mutation_type = mutation_type;
  return r;
}

void send(const idem::Response& response, httplib::Response& res) {
  res.status = response.status;
  std::string content_type = "application/octet-stream";
  for (const idem::Header& h : response.headers) {
    if (strcasecmp(h.name.c_str(), "Content-Type") == 0) {
      content_type = h.value;
    } else {
      res.headers.emplace(h.name, h.value);
    }
  }
  res.set_content(response.body, content_type.c_str());
}

idem::Response json_response(int status, const std::string& body, const std::string& location) {
  idem::Response r;
  r.status = status;
  r.headers.push_back({"Content-Type", "application/json"});
  if (!location.empty()) r.headers.push_back({"Location", location});
  r.body = body;
  return r;
}

idem::Response problem(int status, const std::string& code, const std::string& title, const std::string& detail,
                       idem::Stored stored) {
  return idem::problem_response(status, code, title, detail, stored);
}

void Routes::get(httplib::Server& server, const std::string& pattern, httplib::Server::Handler handler) {
  routes_.emplace_back("GET", std::regex(pattern));
  server.Get(pattern, std::move(handler));
}

void Routes::post(httplib::Server& server, const std::string& pattern, httplib::Server::Handler handler) {
  routes_.emplace_back("POST", std::regex(pattern));
  server.Post(pattern, std::move(handler));
}

std::string Routes::allowed(const std::string& path) const {
  std::string allow;
  for (const auto& [method, pattern] : routes_) {
    if (!std::regex_match(path, pattern)) continue;
    // cpp-httplib answers HEAD with a GET route.
    const std::string methods = method == "GET" ? "GET, HEAD" : method;
    if (allow.find(methods) == std::string::npos) allow += (allow.empty() ? "" : ", ") + methods;
  }
  return allow;
}

void answer_framework_errors(httplib::Server& server, const Routes& routes, std::size_t max_body_bytes) {
  using Answered = httplib::Server::HandlerResponse;
  // cpp-httplib calls this for every status >= 400; the handlers' own answers already have a body.
  const auto fill = [&routes, max_body_bytes](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return Answered::Unhandled;
    send(framework_problem(req, res.status, routes, max_body_bytes), res);
    return Answered::Handled;
  };
  server.set_error_handler(httplib::Server::HandlerWithResponse(fill));
}

}  // namespace checkout
