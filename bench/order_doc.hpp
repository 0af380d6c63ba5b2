// A deterministic order/payment request body of about a given size: the payload the benchmarks
// fingerprint. The C++ benchmark and the SQL comparison (through --emit-doc) use the same documents.
// Header-only so the bench_fingerprint target stays one source file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/support/split_mix64.hpp"

namespace idem::bench {
namespace detail {

using Rng = testing::SplitMix64;

// Prices as JSON decimals from integer cents ("19.99", "4.50"): exact, as clients send them.
inline std::string money(std::uint64_t cents) {
  std::string s = std::to_string(cents / 100) + ".";
  const std::uint64_t c = cents % 100;
  s += static_cast<char>('0' + c / 10);
  s += static_cast<char>('0' + c % 10);
  return s;
}

inline std::string quoted(const char* s) { return std::string("\"") + s + "\""; }

// UTF-8 literals spelled as bytes, so the source stays ASCII.
constexpr const char* kProducts[] = {
    "Caf\xC3\xA9 cr\xC3\xA8me 250 g",            // Café crème
    "Espresso beans, dark roast",
    ("M\xC3\xBC" "sli with blueberries"),        // Müsli (parenthesized: one element)
    "\xE6\x9D\xB1\xE4\xBA\xAC green tea",        // 東京
    "Smoked salmon \xE2\x80\x94 200 g",          // em dash
    "Olive oil extra virgin 0.5 l",
    "Cr\xC3\xAApes (6 pack)",                    // Crêpes
    "Gift card \xF0\x9F\x8E\x81",                // 🎁
};
constexpr const char* kColors[] = {"red", "bl\xC3\xA5", "gr\xC3\xBCn", "black", "white"};
constexpr const char* kSizes[] = {"S", "M", "L", "XL"};
constexpr const char* kTaxRates[] = {"0.19", "0.07", "0.2", "0"};
constexpr const char* kNames[] = {"Zo\xC3\xAB M\xC3\xBCller", ("Jos\xC3\xA9 Garc\xC3\xAD" "a"),
                                  "\xC3\x85sa Lindstr\xC3\xB6m", "Jane Doe"};
constexpr const char* kCities[] = {"M\xC3\xBCnchen", "Malm\xC3\xB6", "S\xC3\xA3o Paulo", "Berlin"};

inline std::string line_item(Rng& rng, std::size_t index) {
  const std::uint64_t unit_cents = 199 + rng.below(9800);
  std::string s = "{\"line\":" + std::to_string(index + 1);
  s += ",\"sku\":\"SKU-" + std::to_string(100000 + rng.below(900000)) + "\"";
  s += ",\"name\":" + quoted(rng.pick(kProducts));
  s += ",\"quantity\":" + std::to_string(1 + rng.below(5));
  s += ",\"unit_price\":" + money(unit_cents);
  s += ",\"tax_rate\":" + std::string(rng.pick(kTaxRates));
  s += ",\"attributes\":{\"color\":" + quoted(rng.pick(kColors)) + ",\"size\":" + quoted(rng.pick(kSizes)) +
       ",\"gift_wrap\":" + (rng.below(4) == 0 ? "true" : "false") + "}";
  if (rng.below(3) == 0) {
    s += ",\"discounts\":[{\"code\":\"SPRING" + std::to_string(10 + rng.below(40)) +
         "\",\"amount\":" + money(50 + rng.below(500)) + "}]";
  }
  s += "}";
  return s;
}

}  // namespace detail

inline std::string order_doc(std::size_t target_bytes, std::uint64_t seed) {
  detail::Rng rng(seed);
  const std::string id = std::to_string(1000000 + rng.below(9000000));
  std::string head = "{\"order_id\":\"ord_" + id + "\",\"currency\":\"EUR\",\"customer\":{\"id\":\"cus_" + id +
                     "\",\"name\":" + detail::quoted(rng.pick(detail::kNames)) +
                     ",\"email\":\"customer" + id + "@example.com\",\"address\":{\"line1\":\"Stra\xC3\x9F" +
                     "e " + std::to_string(1 + rng.below(200)) + "\",\"city\":" +
                     detail::quoted(rng.pick(detail::kCities)) + ",\"postal_code\":\"" +
                     std::to_string(10000 + rng.below(89999)) + "\",\"country\":\"DE\"}},\"items\":[";
  const std::string tail =
      "],\"shipping\":{\"method\":\"express\",\"amount\":" + detail::money(495 + rng.below(1000)) +
      "},\"payment\":{\"method\":\"card\",\"amount\":" + detail::money(1999 + rng.below(500000)) +
      ",\"capture\":true,\"card\":{\"brand\":\"visa\",\"last4\":\"4242\",\"exp_month\":12,\"exp_year\":2027}}" +
      ",\"metadata\":{\"channel\":\"web\",\"note\":\"Bitte nicht klingeln \xE2\x80\x94 \\\"fragile\\\"\\nthanks\"" +
      ",\"coupon\":null,\"gift\":false,\"ratio\":1.5e-3}}";
  std::string doc = head;
  std::size_t n = 0;
  do {
    if (n > 0) doc += ",";
    doc += detail::line_item(rng, n++);
  } while (doc.size() + tail.size() < target_bytes);
  doc += tail;
  return doc;
}

}  // namespace idem::bench
