// Reads the columns the fuzzer asked for (session.cpp selects only these) into the pools.
#include "tests/fuzz_sql/harvest.hpp"

#include <optional>

#include <pqxx/pqxx>

namespace idem::fuzz_sql {

void harvest(const std::string& function, const std::vector<std::string>& arg_names,
             const std::vector<Value>& args, const pqxx::result& rows, Pools& pools) {
  auto arg = [&](const char* name) -> std::optional<std::string> {
    for (std::size_t i = 0; i < args.size() && i < arg_names.size(); ++i) {
      if (arg_names[i] == name) return args[i].text;
    }
    return std::nullopt;
  };
  for (const auto& row : rows) {
    std::string outcome, handle, attempt;
    for (const auto& field : row) {
      if (field.is_null()) continue;
      const std::string column = field.name();
      const std::string value = field.c_str();
      if (column == "outcome") outcome = value;
      if (column == "handle") handle = value;
      if (column == "attempt") attempt = value;
      if (column == "event_id" || column == "emit") pools.add("event_id", value);
      if (column == "token") pools.add("token", value);
      if (column == "order_id") pools.add("order_id", value);
      if (column == "create_topic" && value == "t" && arg("topic")) pools.add("topic", *arg("topic"));
    }
    if (!handle.empty()) {
      pools.add("handle", handle);
      // tenant:<64 hex digits of the scope digest>[:...]: the digest is a real bytea argument.
      const auto colon = handle.find(':');
      if (colon != std::string::npos && handle.size() >= colon + 65) pools.add("digest", handle.substr(colon + 1, 64));
    }
    if ((outcome == "acquired" || outcome == "resumed") && !attempt.empty()) {
      pools.add_holder({handle, attempt});
      pools.add("attempt", attempt);
    }
  }
  if (function == "acquire" && arg("tenant")) pools.add("tenant", *arg("tenant"));
  if (function == "create_consumer" && arg("consumer")) pools.add("consumer", *arg("consumer"));
}

}  // namespace idem::fuzz_sql
