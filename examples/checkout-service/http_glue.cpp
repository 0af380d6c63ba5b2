#include "http_glue.hpp"

#include <strings.h>

namespace checkout {

std::optional<Principal> authenticate(const httplib::Request& req, httplib::Response& res, const std::string& secret) {
  auto who = verify_bearer(secret, req.get_header_value("Authorization"));
  if (!who) {
    send(idem::problem_response(401, "ERR_UNAUTHENTICATED", "Unauthenticated",
                 "send Authorization: Bearer <token> (scripts/stack.sh token <tenant> <caller> mints one)"),
         res);
    res.set_header("WWW-Authenticate", "Bearer");
  }
  return who;
}

idem::Request idem_request(const Principal& who, const httplib::Request& req, const std::string& route,
                           const std::string& mutation_type) {
  idem::Request r;
  r.tenant = who.tenant;
  r.caller = who.caller;
  r.method = req.method;
  r.route = route;
  if (req.has_header("Idempotency-Key")) r.idempotency_key = req.get_header_value("Idempotency-Key");
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

}  // namespace checkout
