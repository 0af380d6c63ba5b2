// The request bodies the service accepts, checked before any key work: a malformed body is the
// caller's to fix, and the fixed request may reuse its key.
#pragma once

#include <string>
#include <variant>

#include "idem/client.hpp"

namespace checkout {

struct CheckoutBody {
  long amount_cents = 0;
  std::string currency;        // ISO 4217, lower case
  std::string payment_method;  // the processor's token, e.g. tok_visa
};

struct RefundBody {
  long amount_cents = 0;
  std::string reason;
  std::string currency;
};

// The body, or the 400 problem response naming what is wrong.
std::variant<CheckoutBody, idem::Response> parse_checkout(const std::string& json);
std::variant<RefundBody, idem::Response> parse_refund(const std::string& json);

}  // namespace checkout
