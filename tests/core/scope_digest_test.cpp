// scope_digest: injective, tenant-separating, and pinned to its encoding.
#include "core/keys/scope_digest.hpp"

#include <gtest/gtest.h>

namespace idem::keys {
namespace {

TEST(ScopeDigest, LengthPrefixesPreventConcatenationCollisions) {
  EXPECT_NE(scope_digest("t", "a#b", "c", "k"), scope_digest("t", "a", "b#c", "k"));
  EXPECT_NE(scope_digest("t", "ab", "", "k"), scope_digest("t", "a", "b", "k"));
  EXPECT_NE(scope_digest("t", "", "", "ab"), scope_digest("t", "", "a", "b"));
}

TEST(ScopeDigest, TenantsNeverShareARecord) {
  EXPECT_NE(scope_digest("acme", "svc", "r", "same-key-0000001"), scope_digest("globex", "svc", "r", "same-key-0000001"));
}

TEST(ScopeDigest, Deterministic) {
  EXPECT_EQ(scope_digest("acme", "svc", "r", "k"), scope_digest("acme", "svc", "r", "k"));
}

// Pins the encoding: "pg_idempotency/scope/v1" NUL, then each part as 4-byte big-endian length +
// bytes. Computed independently: printf 'pg_idempotency/scope/v1\0\0\0\0\4acme\0\0\0\3svc\0\0\0\1r\0\0\0\1k' | sha256sum
TEST(ScopeDigest, GoldenVector) {
  EXPECT_EQ(hash::to_hex(scope_digest("acme", "svc", "r", "k")),
            "b64e0bf247a828ea42095924b05bbeeafa4c64c3d5b79b9455a3bfa0a4c9baa3");
}

}  // namespace
}  // namespace idem::keys
