// The service's side of the payment processor's HTTP API (examples/payment-processor/README.md):
// every call carries our handler key as its Idempotency-Key, so a repeated call is the same charge.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace checkout {

class Metrics;

struct ProcessorAnswer {
  enum class Kind {
    done,         // 2xx: `body` is the charge or refund (a charge may be "requires_action")
    refused,      // a deterministic 4xx (declined card, refund too large): `body` says why
    unavailable,  // 5xx or no connection: nothing happened, or the processor will replay it
    timed_out,    // no answer in time: it may have happened; ask again with the same key
  };
  Kind kind = Kind::unavailable;
  int status = 0;
  nlohmann::json body;
  std::string error;  // for unavailable / timed_out: what happened, in words (the 503/504 detail, the audit's)
};

class ProcessorClient {
 public:
  // metrics, when given, counts every call by operation and result; it must outlive the client.
  ProcessorClient(std::string base_url, std::chrono::milliseconds timeout, Metrics* metrics = nullptr);

  ProcessorAnswer charge(const std::string& idempotency_key, long amount_cents, const std::string& currency,
                         const std::string& source, const nlohmann::json& metadata) const;
  // The charge made under idempotency_key, if any: how a resumed attempt verifies.
  ProcessorAnswer find_charge(const std::string& idempotency_key) const;
  ProcessorAnswer refund(const std::string& idempotency_key, const std::string& charge_id, long amount_cents) const;
  // The refund made under idempotency_key, if any (null body: none).
  ProcessorAnswer find_refund(const std::string& idempotency_key) const;

 private:
  ProcessorAnswer call(const std::string& method, const std::string& path, const std::string& idempotency_key,
                       const std::string& body) const;
  ProcessorAnswer send(const std::string& method, const std::string& path, const std::string& idempotency_key,
                       const std::string& body) const;
  std::string base_url_;
  std::chrono::milliseconds timeout_;
  Metrics* metrics_;
};

}  // namespace checkout
