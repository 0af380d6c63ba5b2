// Deterministic order ids and processor keys: vectors computed independently (Python hashlib over
// the documented encoding), so a change to either encoding fails here.
#include "core/keys/derived_ids.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/keys/scope_digest.hpp"

namespace idem::keys {
namespace {

TEST(DerivedIds, OrderIdVectors) {
  EXPECT_EQ(derive_order_id("acme", "key-A-T0", 1, 1764547200), "692cda8097bd18b74eccddee");
  EXPECT_EQ(derive_order_id("acme", "key-A-T0", 2, 1764547200), "692cda808764b5fabb6e7451");   // another generation
  EXPECT_EQ(derive_order_id("acme2", "key-A-T0", 1, 1764547200), "692cda808bb222771ae97608");  // another tenant
  EXPECT_EQ(derive_order_id("acme", "key-A-T0", 1, 1764547201), "692cda8197bd18b74eccddee");   // a second later
  // Injective: moving a separator between the parts changes the id.
  EXPECT_EQ(derive_order_id("a#b", "c", 1, 0), "00000000b2423fc312d87533");
  EXPECT_EQ(derive_order_id("a", "b#c", 1, 0), "000000001269b7dc53b6996e");
}

TEST(DerivedIds, OrderIdsSortByTime) {
  EXPECT_LT(derive_order_id("z", "k", 9, 1000), derive_order_id("a", "k", 1, 1001));
  EXPECT_EQ(derive_order_id("t", "k", 1, 0xFFFFFFFFLL).substr(0, 8), "ffffffff");
  EXPECT_EQ(derive_order_id("t", "k", 1, 1).size(), 24u);
}

TEST(DerivedIds, OrderIdRefusesWhatItCannotEncode) {
  EXPECT_THROW(derive_order_id("t", "k", 1, -1), Error);
  EXPECT_THROW(derive_order_id("t", "k", 1, 0x100000000LL), Error);
  EXPECT_THROW(derive_order_id("t", "k", 0, 1), Error);
}

TEST(DerivedIds, HandlerKeyVectors) {
  const hash::Digest d = scope_digest("acme", "checkout", "POST /checkout/s1/complete", "key-A-T0");
  ASSERT_EQ(hash::to_hex(d), "a635c6d403de82a35294e8c83a65e4c92dbda52bb4ce6a64d5fb0b35c49b79a6");
  EXPECT_EQ(handler_key(d, 1), "idem_098f66ad6ea3ecfc3d4b090da7e84dc1cac3bb50");
  EXPECT_EQ(handler_key(d, 2), "idem_4171c49930775c0956acbd0dda6e35eaab9adbef");
  EXPECT_THROW(handler_key(d, 0), Error);
}

}  // namespace
}  // namespace idem::keys
