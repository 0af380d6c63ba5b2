// validate_key: presence, length limits and printable ASCII.
#include "core/keys/key_validation.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace idem::keys {
namespace {

ErrorCode code_of(std::optional<std::string_view> key, KeyLimits limits = {}) {
  try {
    validate_key(key, limits);
  } catch (const Error& e) {
    return e.code();
  }
  return ErrorCode::Internal;  // "no error": no test expects Internal from validate_key
}

TEST(KeyValidation, AbsentOrEmptyIsMissing) {
  EXPECT_EQ(code_of(std::nullopt), ErrorCode::KeyMissing);
  EXPECT_EQ(code_of(std::string_view("")), ErrorCode::KeyMissing);
}

TEST(KeyValidation, LengthLimitsAreInclusive) {
  EXPECT_EQ(code_of(std::string(15, 'k')), ErrorCode::KeyInvalid);
  EXPECT_NO_THROW(validate_key(std::string(16, 'k')));
  EXPECT_NO_THROW(validate_key(std::string(128, 'k')));
  EXPECT_NO_THROW(validate_key(std::string(255, 'k')));
  EXPECT_EQ(code_of(std::string(256, 'k')), ErrorCode::KeyInvalid);
}

// Keys up to 255 characters by default (Stripe's limit), so that any key Stripe accepts works.
TEST(KeyValidation, DefaultMaximumIs255) {
  EXPECT_EQ(KeyLimits{}.max_length, 255u);
  try {
    validate_key(std::string(256, 'k'));
    FAIL() << "expected KeyInvalid";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "ERR_IDEMPOTENCY_KEY_INVALID: idempotency key is 256 characters long; it must be 16 to 255");
  }
}

TEST(KeyValidation, CustomLimits) {
  EXPECT_NO_THROW(validate_key(std::string_view("abcd"), KeyLimits{4, 8}));
  EXPECT_EQ(code_of(std::string_view("abcdefghi"), KeyLimits{4, 8}), ErrorCode::KeyInvalid);
}

TEST(KeyValidation, OnlyPrintableAscii) {
  EXPECT_NO_THROW(validate_key(std::string_view("0123456789 ~!@#$%^&*()_+-=[]{}|;':\",./<>?`")));
  EXPECT_EQ(code_of(std::string_view("0123456789abcde\t")), ErrorCode::KeyInvalid);
  EXPECT_EQ(code_of(std::string_view("0123456789abcde\n")), ErrorCode::KeyInvalid);
  EXPECT_EQ(code_of(std::string_view("0123456789abcde\x7f")), ErrorCode::KeyInvalid);
  EXPECT_EQ(code_of(std::string_view("0123456789abcd\xc3\xa9")), ErrorCode::KeyInvalid);  // é
  EXPECT_EQ(code_of(std::string_view("0123456789abcde\0", 16)), ErrorCode::KeyInvalid);
}

TEST(KeyValidation, MessagesNameTheProblem) {
  try {
    validate_key(std::string_view("0123456789abcd\xc3\xa9"));
    FAIL() << "expected KeyInvalid";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "ERR_IDEMPOTENCY_KEY_INVALID: idempotency key has a byte outside printable ASCII (0xC3) at position 14");
    EXPECT_FALSE(e.hint().empty());
  }
}

}  // namespace
}  // namespace idem::keys
