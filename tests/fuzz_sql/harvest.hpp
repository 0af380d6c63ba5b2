// What a successful call leaves for the other sessions: handles and fencing tokens from acquire,
// event ids and claim tokens, order ids, and the tenants, topics and consumers that now exist.
#pragma once

#include <string>
#include <vector>

#include "tests/fuzz_sql/pools.hpp"
#include "tests/fuzz_sql/values.hpp"

namespace pqxx {
class result;
}

namespace idem::fuzz_sql {

void harvest(const std::string& function, const std::vector<std::string>& arg_names,
             const std::vector<Value>& args, const pqxx::result& rows, Pools& pools);

}  // namespace idem::fuzz_sql
