#include "service.hpp"

#include <cstdio>

#include "bodies.hpp"
#include "http_glue.hpp"

namespace checkout {
namespace {

idem::ClientOptions client_options(const ServiceConfig& config) {
  idem::ClientOptions o;
  o.lease = config.lease;
  o.pool_size = 8;
  return o;
}

}  // namespace

Service::Service(const ServiceConfig& config)
    : config_(config), client_(config.db_url, client_options(config)), processor_(config.processor_url, config.processor_timeout) {}

void Service::route(httplib::Server& server) {
  server.Post(R"(/checkout/([A-Za-z0-9_-]{1,64})/complete)",
              [this](const httplib::Request& req, httplib::Response& res) { checkout(req, res); });
  server.Post(R"(/v1/payments/([^/]+)/refunds)",
              [this](const httplib::Request& req, httplib::Response& res) { refund(req, res); });
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  // Whatever a handler throws (the database gone, a lease lost) becomes its problem response.
  server.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const idem::ClientError& e) {
      std::fprintf(stderr, "checkout-service: %s %s: %s\n", req.method.c_str(), req.path.c_str(), e.what());
      send(idem::problem_response(e), res);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "checkout-service: %s %s: %s\n", req.method.c_str(), req.path.c_str(), e.what());
      send(idem::problem_response(500, "ERR_INTERNAL", "Internal error", "the request could not be completed"), res);
    }
  });
}

idem::Response Service::released(idem::Lease& lease, const ProcessorAnswer& answer) {
  lease.release(answer.error);
  const bool timed_out = answer.kind == ProcessorAnswer::Kind::timed_out;
  idem::Response r = idem::problem_response(
      timed_out ? 504 : 503, timed_out ? "ERR_PROCESSOR_TIMEOUT" : "ERR_PROCESSOR_UNAVAILABLE",
      timed_out ? "Payment processor timeout" : "Payment processor unavailable",
      answer.error + "; retry with the same Idempotency-Key (nothing is charged twice)");
  r.headers.push_back({"Retry-After", "1"});
  return r;
}

}  // namespace checkout
