// Shared HTTP plumbing; see http_support.hpp.
#include "http_support.hpp"

#include <cstdio>

namespace processor {
namespace {

constexpr size_t kBodyLimit = 1 << 20;
// Enough for slow/timeout faults that park a worker for seconds while other requests go on.
constexpr size_t kWorkerThreads = 16;

struct BodilessError {
  const char* code;
  std::string message;
};

// cpp-httplib's own refusals, said the way our API says errors.
BodilessError bodiless_error(const httplib::Request& req, int status) {
  if (status == 404) return {"route_not_found", "Unrecognized request URL (" + req.method + ": " + req.path + ")"};
  if (status == 413) return {"request_too_large", "The request body is larger than 1 MiB"};
  if (status == 400)
    return {"request_malformed", "The HTTP request could not be read (a POST needs Content-Length or chunking)"};
  return {"http_error", "HTTP " + std::to_string(status)};
}

}  // namespace

void reply(httplib::Response& res, const ApiResponse& answer) {
  res.status = answer.status;
  res.set_content(answer.body, "application/json");
}

httplib::Server::Handler guarded(httplib::Server::Handler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    std::string what;
    try {
      handler(req, res);
      return;
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "unknown exception";
    }
    std::fprintf(stderr, "payment-processor: %s %s failed: %s\n", req.method.c_str(), req.path.c_str(), what.c_str());
    res.headers.erase("Idempotent-Replayed");
    reply(res, api_error(500, "api_error", "internal_error", "The processor failed to handle the request: " + what));
  };
}

std::optional<std::string> query_param(const httplib::Request& req, const char* name) {
  if (!req.has_param(name)) return std::nullopt;
  return req.get_param_value(name);
}

void configure_server(httplib::Server& server) {
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  server.set_payload_max_length(kBodyLimit);
  // cpp-httplib's default is SO_REUSEPORT, with which a second processor on a taken port starts
  // "fine" and the kernel splits the traffic between the two. SO_REUSEADDR alone makes it fail.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // cpp-httplib calls this for every status >= 400; our own answers already have a body.
  using Answered = httplib::Server::HandlerResponse;
  const auto json_error = [](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return Answered::Unhandled;
    const BodilessError error = bodiless_error(req, res.status);
    reply(res, api_error(res.status, "invalid_request_error", error.code, error.message));
    return Answered::Handled;
  };
  server.set_error_handler(httplib::Server::HandlerWithResponse(json_error));
  server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    const std::string key = req.get_header_value("Idempotency-Key");
    std::fprintf(stderr, "payment-processor: %s %s%s%s -> %d%s\n", req.method.c_str(), req.path.c_str(),
                 key.empty() ? "" : " key=", key.c_str(), res.status,
                 res.has_header("Idempotent-Replayed") ? " (replayed)" : "");
  });
}

}  // namespace processor
