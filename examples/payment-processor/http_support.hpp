// What every route shares: writing an ApiResponse, turning any exception into a 500 JSON answer
// instead of a dead worker, and JSON bodies for the errors cpp-httplib answers itself (404, 413).
#pragma once

#include <httplib.h>

#include <optional>
#include <string>

#include "api_response.hpp"

namespace processor {

void reply(httplib::Response& res, const ApiResponse& answer);

// handler, but an exception (a database error, a lost connection) becomes 500 api_error.
httplib::Server::Handler guarded(httplib::Server::Handler handler);

// The query parameter `name`, if present.
std::optional<std::string> query_param(const httplib::Request& req, const char* name);

// JSON bodies for bodiless error answers, a 1 MiB body limit, a worker pool, a port of its own,
// a log line per request on stderr.
void configure_server(httplib::Server& server);

}  // namespace processor
