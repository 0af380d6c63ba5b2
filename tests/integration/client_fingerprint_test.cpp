// The client fingerprints request bodies with core/ and sends the 32 bytes (acquire's bytea
// overload); the server must store exactly what its own idem.payload_hash computes for the
// same body, on every golden vector of the current scheme (tests/golden/).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/fingerprint.hpp"
#include "tests/integration/client_support.hpp"

namespace idem::it {
namespace {

TEST(ClientFingerprint, StoredHashEqualsServerPayloadHashOnGoldenVectors) {
  std::ifstream in(std::string(IDEM_SOURCE_DIR) + "/tests/golden/fingerprint_scheme" +
                   std::to_string(kFingerprintScheme) + ".json");
  ASSERT_TRUE(in.good());
  const auto vectors = nlohmann::json::parse(in);
  ASSERT_GE(vectors.size(), 20u);
  ClientDatabase db;
  Client client(db.url());
  Connection check(db.url());
  int n = 0;
  for (const auto& v : vectors) {
    const std::string input = v.at("input");
    const std::vector<std::string> exclude = v.value("exclude", std::vector<std::string>{});
    Request r = order_request("golden-vector-key-" + std::to_string(n++), input);
    r.fingerprint_exclusions = exclude;
    ASSERT_EQ(client.run(r, [](Attempt&) { return Response{}; }).status, 200) << input;
    nlohmann::json exclude_array = exclude;
    // The text[] literal of the pointers: a JSON array of strings spelled as {...}.
    std::string literal = "{";
    for (std::size_t i = 0; i < exclude.size(); ++i) literal += (i ? "," : "") + nlohmann::json(exclude[i]).dump();
    literal += "}";
    const Result row = check.exec(
        "SELECT encode(k.payload_hash, 'hex') AS stored, encode(idem.payload_hash($1::text, $2::text[]), 'hex') AS server,"
        " k.hash_scheme = idem.fingerprint_scheme() AS same_scheme"
        " FROM idem.keys k WHERE k.tenant_id = 'acme'"
        " AND k.scope_digest = idem.scope_digest('acme', 'checkout', 'POST /v1/orders', $3)",
        {input, literal, *r.idempotency_key});
    ASSERT_EQ(row.size(), 1u) << input;
    EXPECT_EQ(row.text(0, "stored"), row.text(0, "server")) << input;
    EXPECT_EQ(row.text(0, "stored"), v.at("sha256").get<std::string>()) << input;
    EXPECT_EQ(row.text(0, "same_scheme"), "t");
  }
}

}  // namespace
}  // namespace idem::it
