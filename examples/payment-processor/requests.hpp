// The request bodies of POST /v1/charges and POST /v1/refunds, checked the way Stripe checks
// parameters: a wrong one is a 400 that names it, and such a request is never stored under its key.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "api_response.hpp"

namespace processor {

struct ChargeRequest {
  int64_t amount_cents = 0;
  std::string currency;
  std::string source;
  std::optional<std::string> description;
  std::string metadata_json = "{}";
};

struct RefundRequest {
  std::string charge;
  std::optional<int64_t> amount_cents;  // absent: whatever is not refunded yet
};

// The body parsed as a JSON object, or the 400 invalid_json answer.
std::variant<nlohmann::json, ApiResponse> parse_body(const std::string& body);

std::variant<ChargeRequest, ApiResponse> parse_charge_request(const nlohmann::json& body);
std::variant<RefundRequest, ApiResponse> parse_refund_request(const nlohmann::json& body);

// The Idempotency-Key header's 400, if it is missing or not 1-255 printable ASCII characters.
std::optional<ApiResponse> check_idempotency_key(const std::string& key);

}  // namespace processor
