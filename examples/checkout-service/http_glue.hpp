// Between cpp-httplib and the client: who is calling, the idem::Request of an HTTP request, an
// idem::Response written back byte for byte (headers in order, duplicates kept), and problem+json
// for what cpp-httplib answers by itself (unknown route, wrong method, body over the limit).
#pragma once

#include <httplib.h>

#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "auth.hpp"
#include "idem/client.hpp"

namespace checkout {

// The caller of `req`, or nullopt after answering 401 (before any key work, as Stripe does).
std::optional<Principal> authenticate(const httplib::Request& req, httplib::Response& res, const std::string& secret);

// tenant + caller from the token, the route with its path parameters (so the key's scope is
// tenant + caller + resource + key), the key of the Idempotency-Key header (idem/key_header.hpp:
// an RFC 8941 String, or the bare form) if sent, the body bytes. Or the 400 for a header that
// is no key: a list, parameters, several lines, a bad escape, non-ASCII.
std::variant<idem::Request, idem::Response> idem_request(const Principal& who, const httplib::Request& req,
                                                         const std::string& route, const std::string& mutation_type);

void send(const idem::Response& response, httplib::Response& res);

// The JSON response of a created resource.
idem::Response json_response(int status, const std::string& body, const std::string& location = "");

// The service's problem+json: every one says whether it is the key's stored answer (docs/client.md).
idem::Response problem(int status, const std::string& code, const std::string& title, const std::string& detail,
                       idem::Stored stored);

// The routes the server has, kept so that a request no handler took is told apart: a path no
// route has (404) from a method the path does not take (405 + Allow).
class Routes {
 public:
  void get(httplib::Server& server, const std::string& pattern, httplib::Server::Handler handler);
  void post(httplib::Server& server, const std::string& pattern, httplib::Server::Handler handler);
  // The methods `path` takes, e.g. "POST" or "GET, HEAD"; empty when no route has the path.
  std::string allowed(const std::string& path) const;

 private:
  std::vector<std::pair<std::string, std::regex>> routes_;
};

// cpp-httplib answers some requests itself with an empty body (no route: 404, or 405 when the path
// takes other methods; a body over max_body_bytes: 413; an unreadable request: 400): give those
// a problem+json body, "stored": false. `routes` must outlive `server`.
void answer_framework_errors(httplib::Server& server, const Routes& routes, std::size_t max_body_bytes);

}  // namespace checkout
