// The checkout service: POST /checkout/{session_id}/complete (the reference's serving plane) and
// POST /v1/payments/{payment_id}/refunds (the refund contract), each a multi-step idempotent
// mutation on idem::Client: lease the key, call the payment processor with the handler key,
// checkpoint, complete with the business writes and the order_intent event.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>

#include "http_glue.hpp"
#include "idem/client.hpp"
#include "metrics.hpp"
#include "processor_client.hpp"

namespace checkout {

struct ServiceConfig {
  std::string listen = "127.0.0.1:7400";
  std::string db_url;
  std::string processor_url = "http://127.0.0.1:7401";
  std::string token_secret;
  std::chrono::milliseconds lease{3000};               // how long a crashed attempt holds its key
  std::chrono::milliseconds processor_timeout{2000};  // then the attempt is released, to be verified
  bool faults = false;  // honour X-Demo-Fault (tests and the demo only)
  bool citus = false;   // the database is a Citus coordinator (docs/citus.md): tenant-first calls
};

// Request bodies beyond this are refused with 413 (by cpp-httplib, and by the client's check).
constexpr std::size_t kMaxBodyBytes = 1 << 20;

class Service {
 public:
  explicit Service(const ServiceConfig& config);
  // The routes, the body limit and the problem+json answers of errors; `server` must not outlive
  // the service.
  void route(httplib::Server& server);

 private:
  void checkout(const httplib::Request& req, httplib::Response& res);
  void refund(const httplib::Request& req, httplib::Response& res);
  idem::Response checkout_with(idem::Lease& lease, const idem::Request& request, const std::string& session_id,
                               const struct CheckoutBody& body, bool crash_after_charge);
  idem::Response refund_with(idem::Lease& lease, const idem::Request& request, const std::string& payment_id,
                             const struct RefundBody& body, bool crash_after_refund);
  // The processor could not be reached (or did not answer in time): the key is released, and the
  // retry resumes at the checkpoint and asks the processor before charging.
  idem::Response released(idem::Lease& lease, const ProcessorAnswer& answer);

  ServiceConfig config_;
  Metrics metrics_;  // before processor_, which counts into it
  idem::Client client_;
  ProcessorClient processor_;
  Routes routes_;
};

}  // namespace checkout
