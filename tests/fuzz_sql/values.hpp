// Argument values for a call: a typed SQL expression per argument. A hostile argument gets an edge
// case of its type (or a mangled version of what its name wants: another tenant's handle, the
// token next to the real one); the others get values that pass validation as often as the fuzzer
// can make them (real handles, registered topics, valid keys), so one hostile argument at a time
// reaches the code behind the checks of the others.
#pragma once

#include <optional>
#include <string>

#include "tests/fuzz_sql/catalog.hpp"
#include "tests/fuzz_sql/pools.hpp"

namespace idem::fuzz_sql {

struct Value {
  std::string sql;                  // always typed: CAST('...' AS text), CAST(NULL AS bigint), ARRAY[...]
  std::optional<std::string> text;  // the plain value when there is one, for the pools
};

class ValueMaker {
 public:
  ValueMaker(Rng& rng, const Pools& pools) : rng_(rng), pools_(pools) {}

  // Starts a call: one with both a handle and an attempt gets a real holder's pair most times.
  void begin_call();
  Value make(const Type& type, const std::string& arg_name, bool hostile);
  // An expression of a type other than `type`, for wrong-type calls (42883 expected).
  std::string wrong_type(const Type& type);

 private:
  Value by_name(const Type& type, const std::string& name, bool& handled);
  Value edge(const Type& type, const std::string& name);    // the type's edge cases
  Value benign(const Type& type, const std::string& name);  // a valid-looking value of the type
  Value text_value(const std::string& type, const std::string& text);
  Value null(const Type& type) const;
  std::string integer(const std::string& type_name);
  std::string interval();
  std::string timestamp();
  std::string uuid();
  Value array(const Type& type, const std::string& name);
  Value composite(const Type& type);

  Rng& rng_;
  const Pools& pools_;
  bool hostile_ = false;  // the argument being made
  std::optional<Pools::Holder> holder_;
};

}  // namespace idem::fuzz_sql
