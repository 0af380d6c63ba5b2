// The point of this program: per Idempotency-Key, a payment request executes at most once, and
// every later request with that key gets the first answer back, byte for byte, for 31 days.
#pragma once

#include <pqxx/pqxx>

#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "api_response.hpp"
#include "connection_pool.hpp"

namespace processor {

struct KeyedRequest {
  std::string key;
  std::string endpoint;     // "POST /v1/charges": a key used on another endpoint is a reuse too
  std::string fingerprint;  // request_fingerprint(endpoint, body)
};

// SHA-256 of the endpoint and the body's canonical form (keys sorted, no whitespace), so the same
// parameters written differently are the same request.
std::string request_fingerprint(const std::string& endpoint, const nlohmann::json& body);

struct KeyedAnswer {
  ApiResponse response;
  bool replayed = false;
};

using Execution = std::function<ApiResponse(pqxx::work&)>;

// In one transaction: takes the key's advisory lock (a concurrent request with the same key waits
// here until the first commits, then replays its answer), waits `hold_before_executing` (the slow
// fault), then replays the stored answer, refuses a different fingerprint with 400
// idempotency_key_reused, or runs `execute` and stores its answer — committed with its writes.
KeyedAnswer execute_once(ConnectionPool& pool, const KeyedRequest& request,
                         std::chrono::milliseconds hold_before_executing, const Execution& execute);

}  // namespace processor
