// sha256: the FIPS 180-2 test vectors, through OpenSSL EVP.
#include "core/hash/sha256.hpp"

#include <gtest/gtest.h>

#include <string>

namespace idem::hash {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, BinaryInputWithZeroBytes) {
  const std::string bytes("a\0b", 3);
  EXPECT_NE(sha256(bytes), sha256("a"));
  EXPECT_EQ(sha256(bytes).size(), 32u);
}

}  // namespace
}  // namespace idem::hash
