// Handles: format and parse are inverses; anything else is refused.
#include "core/keys/handle.hpp"

#include <gtest/gtest.h>

#include "core/keys/scope_digest.hpp"

namespace idem::keys {
namespace {

TEST(Handle, RoundTripsAndKeepsColonsInTenants) {
  const auto digest = scope_digest("a:b", "svc", "r", "0123456789abcdef");
  const std::string handle = format_handle("a:b", digest);
  EXPECT_EQ(handle, "a:b:" + hash::to_hex(digest));
  const auto parsed = parse_handle(handle);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->tenant, "a:b");
  EXPECT_EQ(parsed->scope_digest, digest);
}

TEST(Handle, RefusesWhatFormatDidNotProduce) {
  const std::string hex(64, 'a');
  EXPECT_FALSE(parse_handle("").has_value());
  EXPECT_FALSE(parse_handle(":" + hex).has_value());                 // empty tenant
  EXPECT_FALSE(parse_handle("t" + hex).has_value());                 // no separator
  EXPECT_FALSE(parse_handle("t:" + hex.substr(1)).has_value());      // 63 digits
  EXPECT_FALSE(parse_handle("t:" + std::string(64, 'A')).has_value());  // upper case
  EXPECT_FALSE(parse_handle("t:" + std::string(63, 'a') + "g").has_value());
  EXPECT_TRUE(parse_handle("t:" + hex).has_value());
}

TEST(Handle, CarriesTheLeaseSecretAcquireAppends) {
  const auto digest = scope_digest("a:b", "svc", "r", "0123456789abcdef");
  const std::string secret(32, 'c');
  const std::string holder = format_handle("a:b", digest) + ":" + secret;  // views point into it
  const auto parsed = parse_handle(holder);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->tenant, "a:b");
  EXPECT_EQ(parsed->scope_digest, digest);
  EXPECT_EQ(parsed->lease_secret, secret);
  const std::string plain = format_handle("a:b", digest);
  EXPECT_EQ(parse_handle(plain)->lease_secret, "");
  // A tenant that itself ends like a digest still parses as a plain handle.
  const std::string tricky = format_handle("t:" + hash::to_hex(digest), digest);
  EXPECT_EQ(parse_handle(tricky)->tenant, "t:" + hash::to_hex(digest));
  EXPECT_EQ(parse_handle(tricky)->lease_secret, "");
  EXPECT_FALSE(parse_handle(format_handle("t", digest) + ":" + std::string(31, 'c')).has_value());
  EXPECT_FALSE(parse_handle(format_handle("t", digest) + ":" + std::string(32, 'C')).has_value());
  EXPECT_FALSE(parse_handle(":" + secret).has_value());
}

TEST(Hex, FromHexInvertsToHex) {
  const auto digest = hash::sha256("abc");
  EXPECT_EQ(hash::from_hex(hash::to_hex(digest)), digest);
  EXPECT_FALSE(hash::from_hex("ab").has_value());
}

}  // namespace
}  // namespace idem::keys
