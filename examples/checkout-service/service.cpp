#include "service.hpp"

#include <chrono>
#include <cstdio>

#include "bodies.hpp"
#include "http_glue.hpp"

namespace checkout {
namespace {

// When the request this worker thread answers began (cpp-httplib runs a request on one thread).
thread_local std::chrono::steady_clock::time_point request_started;

idem::ClientOptions client_options(const ServiceConfig& config) {
  idem::ClientOptions o;
  o.lease = config.lease;
  o.pool_size = 8;
  o.max_body_bytes = kMaxBodyBytes;
  o.citus = config.citus;
  return o;
}

}  // namespace

Service::Service(const ServiceConfig& config)
    : config_(config),
      client_(config.db_url, client_options(config)),
      processor_(config.processor_url, config.processor_timeout, &metrics_) {}

void Service::route(httplib::Server& server) {
  routes_.post(server, R"(/checkout/([A-Za-z0-9_-]{1,64})/complete)",
               [this](const httplib::Request& req, httplib::Response& res) { checkout(req, res); });
  routes_.post(server, R"(/v1/payments/([^/]+)/refunds)",
               [this](const httplib::Request& req, httplib::Response& res) { refund(req, res); });
  routes_.get(server, "/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  routes_.get(server, "/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.scrape(client_.stats()), "text/plain; version=0.0.4; charset=utf-8");
  });
  // Every answer is counted once written, whoever made it (a handler, the exception handler,
  // cpp-httplib's own 404/405/413); its time runs from the start of routing on this thread.
  server.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    request_started = std::chrono::steady_clock::now();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - request_started;
    metrics_.request(route_name(req.path), res.status, res.get_header_value("Idempotent-Replayed") == "true", took.count());
  });
  server.set_payload_max_length(kMaxBodyBytes);
  answer_framework_errors(server, routes_, kMaxBodyBytes);
  // Whatever a handler throws (the database gone, a lease lost) becomes its problem response;
  // the message (which may name key digests and attempts) goes to the log only.
  server.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const idem::ClientError& e) {
      std::fprintf(stderr, "checkout-service: %s %s: %s\n", req.method.c_str(), req.path.c_str(), e.what());
      send(idem::problem_response(e), res);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "checkout-service: %s %s: %s\n", req.method.c_str(), req.path.c_str(), e.what());
      // Whether anything was recorded before the throw is not known here.
      send(problem(500, "ERR_INTERNAL", "Internal error", "the request could not be completed", idem::Stored::unsaid),
           res);
    }
  });
}

idem::Response Service::released(idem::Lease& lease, const ProcessorAnswer& answer) {
  lease.release(answer.error);
  const bool timed_out = answer.kind == ProcessorAnswer::Kind::timed_out;
  idem::Response r =
      problem(timed_out ? 504 : 503, timed_out ? "ERR_PROCESSOR_TIMEOUT" : "ERR_PROCESSOR_UNAVAILABLE",
              timed_out ? "Payment processor timeout" : "Payment processor unavailable",
              answer.error +
                  ". Retry with the same Idempotency-Key after Retry-After seconds: the retry first asks the "
                  "processor what it did, so nothing is charged or refunded twice",
              idem::Stored::no);
  r.headers.push_back({"Retry-After", "1"});
  return r;
}

}  // namespace checkout
