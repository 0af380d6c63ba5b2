// pg::with_host: the connection string of a Citus node, reached as the coordinator is, with a
// connect timeout unless one is given (a node that accepts but never answers held the consumer's
// listener connect for ever).
#include "client/src/pg_session.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "idem/client.hpp"

namespace idem::pg {
namespace {

class WithHost : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* was = std::getenv("PGCONNECT_TIMEOUT");
    saved_ = was != nullptr ? std::optional<std::string>(was) : std::nullopt;
    unsetenv("PGCONNECT_TIMEOUT");
  }
  void TearDown() override {
    if (saved_) setenv("PGCONNECT_TIMEOUT", saved_->c_str(), 1);
  }
  std::optional<std::string> saved_;
};

TEST_F(WithHost, ReplacesHostAndPortKeepsTheRestAndAddsATimeout) {
  EXPECT_EQ(with_host("postgresql://svc:pw@coord:5432/shop?application_name=c1", "10.0.0.7", 6001),
            "host='10.0.0.7' port=6001 user='svc' password='pw' dbname='shop' application_name='c1' connect_timeout=5");
}

TEST_F(WithHost, KeepsTheTimeoutTheStringGives) {
  EXPECT_EQ(with_host("host=coord port=5432 dbname=shop connect_timeout=2", "w1", 6001),
            "host='w1' port=6001 connect_timeout='2' dbname='shop'");
}

TEST_F(WithHost, LeavesTheTimeoutToPgconnectTimeoutWhenSet) {
  setenv("PGCONNECT_TIMEOUT", "9", 1);
  EXPECT_EQ(with_host("dbname=shop", "w1", 6001), "host='w1' port=6001 dbname='shop'");
}

TEST_F(WithHost, AnEmptyPgconnectTimeoutIsNoTimeout) {
  setenv("PGCONNECT_TIMEOUT", "", 1);
  EXPECT_EQ(with_host("dbname=shop", "w1", 6001), "host='w1' port=6001 dbname='shop' connect_timeout=5");
}

TEST_F(WithHost, QuotesValuesAndRefusesAStringLibpqCannotRead) {
  EXPECT_EQ(with_host("dbname='it\\'s' password='a\\\\b'", "w1", 1),
            "host='w1' port=1 password='a\\\\b' dbname='it\\'s' connect_timeout=5");
  try {
    (void)with_host("dbname='unterminated", "w1", 1);
    FAIL() << "no error";
  } catch (const DatabaseError& e) {
    EXPECT_EQ(e.name(), "ERR_CLIENT_DATABASE");
  }
}

}  // namespace
}  // namespace idem::pg
