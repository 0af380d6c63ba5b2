// Request validation; see requests.hpp.
#include "requests.hpp"

#include <algorithm>
#include <initializer_list>

namespace processor {
namespace {

constexpr int64_t kMaxAmountCents = 99999999;  // Stripe's limit: 999,999.99 in a two-decimal currency

ApiResponse invalid(std::string_view code, const std::string& message, std::string_view param = {}) {
  return api_error(400, "invalid_request_error", code, message, param);
}

std::optional<ApiResponse> unknown_parameter(const nlohmann::json& body, std::initializer_list<const char*> known) {
  for (const auto& item : body.items()) {
    if (std::none_of(known.begin(), known.end(), [&](const char* name) { return item.key() == name; }))
      return invalid("parameter_unknown", "Received unknown parameter: " + item.key(), item.key());
  }
  return std::nullopt;
}

// PostgreSQL text and jsonb cannot hold U+0000: refuse it here rather than fail in the database.
bool holds_nul(const nlohmann::json& value) {
  if (value.is_string()) return value.get_ref<const std::string&>().find('\0') != std::string::npos;
  if (value.is_object())
    for (const auto& item : value.items())
      if (item.key().find('\0') != std::string::npos || holds_nul(item.value())) return true;
  if (value.is_array())
    for (const auto& element : value)
      if (holds_nul(element)) return true;
  return false;
}

std::variant<int64_t, ApiResponse> read_amount(const nlohmann::json& value, const char* param) {
  if (!value.is_number_integer())
    return invalid("parameter_invalid_integer", std::string("Invalid integer: ") + param, param);
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(kMaxAmountCents))
    return invalid("amount_too_large", "Amount must be no more than 99999999 cents", param);
  const auto amount = value.get<int64_t>();
  if (amount < 1) return invalid("amount_too_small", "Amount must be at least 1 cent", param);
  if (amount > kMaxAmountCents) return invalid("amount_too_large", "Amount must be no more than 99999999 cents", param);
  return amount;
}

std::optional<ApiResponse> require_string(const nlohmann::json& body, const char* param) {
  if (!body.contains(param))
    return invalid("parameter_missing", std::string("Missing required param: ") + param, param);
  if (!body[param].is_string()) return invalid("parameter_invalid", std::string(param) + " must be a string", param);
  return std::nullopt;
}

bool is_currency(const std::string& text) {
  return text.size() == 3 && std::all_of(text.begin(), text.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

}  // namespace

std::variant<nlohmann::json, ApiResponse> parse_body(const std::string& body) {
  auto parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object())
    return invalid("invalid_json", "The request body must be a JSON object");
  if (holds_nul(parsed)) return invalid("invalid_json", "Strings in the request body must not contain U+0000");
  return parsed;
}

std::variant<ChargeRequest, ApiResponse> parse_charge_request(const nlohmann::json& body) {
  if (auto bad = unknown_parameter(body, {"amount_cents", "currency", "source", "description", "metadata"}))
    return *bad;
  ChargeRequest request;
  if (!body.contains("amount_cents"))
    return invalid("parameter_missing", "Missing required param: amount_cents", "amount_cents");
  const auto amount = read_amount(body["amount_cents"], "amount_cents");
  if (const auto* bad = std::get_if<ApiResponse>(&amount)) return *bad;
  request.amount_cents = std::get<int64_t>(amount);

  if (auto bad = require_string(body, "currency")) return *bad;
  request.currency = body["currency"].get<std::string>();
  if (!is_currency(request.currency))
    return invalid("parameter_invalid", "currency must be a lowercase ISO 4217 code such as usd", "currency");

  if (auto bad = require_string(body, "source")) return *bad;
  request.source = body["source"].get<std::string>();
  if (request.source.rfind("tok_", 0) != 0)
    return invalid("resource_missing", "No such token: '" + request.source + "'", "source");

  if (body.contains("description")) {
    if (!body["description"].is_string())
      return invalid("parameter_invalid", "description must be a string", "description");
    request.description = body["description"].get<std::string>();
  }
  if (body.contains("metadata")) {
    if (!body["metadata"].is_object()) return invalid("parameter_invalid", "metadata must be an object", "metadata");
    request.metadata_json = body["metadata"].dump();
  }
  return request;
}

std::variant<RefundRequest, ApiResponse> parse_refund_request(const nlohmann::json& body) {
  if (auto bad = unknown_parameter(body, {"charge", "amount_cents"})) return *bad;
  RefundRequest request;
  if (auto bad = require_string(body, "charge")) return *bad;
  request.charge = body["charge"].get<std::string>();
  if (body.contains("amount_cents")) {
    const auto amount = read_amount(body["amount_cents"], "amount_cents");
    if (const auto* bad = std::get_if<ApiResponse>(&amount)) return *bad;
    request.amount_cents = std::get<int64_t>(amount);
  }
  return request;
}

std::optional<ApiResponse> check_idempotency_key(const std::string& key) {
  if (key.empty())
    return invalid("idempotency_key_missing",
                   "This endpoint requires an Idempotency-Key header: one unique value per logical request");
  const bool printable = std::all_of(key.begin(), key.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
  if (key.size() > 255 || !printable)
    return invalid("idempotency_key_invalid", "Idempotency-Key must be 1-255 printable ASCII characters");
  return std::nullopt;
}

}  // namespace processor

