#include "bodies.hpp"

#include <nlohmann/json.hpp>

namespace checkout {
namespace {

idem::Response invalid(const std::string& detail) {
  // Before any key work: nothing is recorded, and the fixed request may reuse its key.
  return idem::problem_response(400, "ERR_REQUEST_INVALID", "Invalid request", detail, idem::Stored::no);
}

bool currency_code(const nlohmann::json& v) {
  if (!v.is_string()) return false;
  const std::string s = v.get<std::string>();
  return s.size() == 3 && s.find_first_not_of("abcdefghijklmnopqrstuvwxyz") == std::string::npos;
}

// The processor's own bound (examples/payment-processor): more is a request to fix, not a decline.
constexpr long long kMaxCents = 99'999'999;

bool positive_cents(const nlohmann::json& v) {
  return v.is_number_integer() && v.get<long long>() > 0 && v.get<long long>() <= kMaxCents;
}

// Text reaches the database as C strings: a NUL would cut it short, so it is refused.
bool text_without_nul(const nlohmann::json& v) {
  return v.is_string() && !v.get<std::string>().empty() && v.get<std::string>().find('\0') == std::string::npos;
}

}  // namespace

std::variant<CheckoutBody, idem::Response> parse_checkout(const std::string& json) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_object()) return invalid("the body must be a JSON object");
  if (!positive_cents(doc.value("amount_cents", nlohmann::json()))) {
    return invalid("amount_cents must be a positive integer (at most 99,999,999)");
  }
  if (!currency_code(doc.value("currency", nlohmann::json()))) return invalid("currency must be a 3-letter code, e.g. usd");
  const nlohmann::json method = doc.value("payment_method", nlohmann::json());
  if (!text_without_nul(method) || method.get<std::string>().rfind("tok_", 0) != 0) {
    return invalid("payment_method must be a processor token (tok_...)");
  }
  return CheckoutBody{doc["amount_cents"].get<long>(), doc["currency"].get<std::string>(), method.get<std::string>()};
}

std::variant<RefundBody, idem::Response> parse_refund(const std::string& json) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_object()) return invalid("the body must be a JSON object");
  if (!positive_cents(doc.value("amount_cents", nlohmann::json()))) {
    return invalid("amount_cents must be a positive integer (at most 99,999,999)");
  }
  const nlohmann::json reason = doc.value("reason", nlohmann::json());
  if (!text_without_nul(reason)) return invalid("reason must be a non-empty string without NUL characters");
  if (!currency_code(doc.value("currency", nlohmann::json()))) return invalid("currency must be a 3-letter code, e.g. usd");
  return RefundBody{doc["amount_cents"].get<long>(), reason.get<std::string>(), doc["currency"].get<std::string>()};
}

}  // namespace checkout
