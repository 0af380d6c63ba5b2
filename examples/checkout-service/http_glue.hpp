// Between cpp-httplib and the client: who is calling, the idem::Request of an HTTP request, and
// an idem::Response written back byte for byte (headers in order, duplicates kept).
#pragma once

#include <httplib.h>

#include <optional>
#include <string>

#include "auth.hpp"
#include "idem/client.hpp"

namespace checkout {

// The caller of `req`, or nullopt after answering 401 (before any key work, as Stripe does).
std::optional<Principal> authenticate(const httplib::Request& req, httplib::Response& res, const std::string& secret);

// tenant + caller from the token, the route with its path parameters (so the key's scope is
// tenant + caller + resource + key), the Idempotency-Key header if sent, the body bytes.
idem::Request idem_request(const Principal& who, const httplib::Request& req, const std::string& route,
                           const std::string& mutation_type);

void send(const idem::Response& response, httplib::Response& res);

// The JSON response of a created resource.
idem::Response json_response(int status, const std::string& body, const std::string& location = "");

}  // namespace checkout
