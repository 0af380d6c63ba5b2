// The functions of schema idem as the fuzzer sees them, read from pg_proc at start: input
// arguments with their names and types (arrays with their element, composites with their
// attributes), output columns, and which of the fuzzer's roles may execute each one.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace idem::fuzz_sql {

struct Type {
  std::string name;    // format_type(): "text", "bigint[]", "timestamp with time zone", "idem.keys"
  char category = 'X'; // pg_type.typcategory: 'A' array, 'C' composite, 'S' string, 'N' numeric, ...
  std::string base;    // the base type's name for a domain, else `name` (what values are made of)
  std::shared_ptr<Type> element;                    // arrays
  std::vector<std::pair<std::string, Type>> fields; // composites: (attribute, type)
  std::string table;   // a composite that is a table's row type: that table, to take real rows from
};

struct Function {
  std::string name;       // "acquire"
  std::string signature;  // "idem.acquire(text,text,jsonb,text,text,interval,interval,text,text)"
  std::vector<std::string> arg_names;  // input arguments ("" when unnamed)
  std::vector<Type> args;
  int defaults = 0;           // how many trailing arguments may be left out
  bool returns_rows = false;  // SETOF or a composite: called in FROM, its columns read by name
  bool returns_trigger = false;
  std::vector<std::string> columns;  // output column names when returns_rows
  char volatility = 'v';
  bool strict = false;
  std::set<std::string> executors;   // login roles (of Catalog::roles) holding EXECUTE

  bool internal() const { return !name.empty() && name[0] == '_'; }
};

// A login role the fuzzer connects as.
struct Role {
  std::string user;   // "fuzz_service"
  std::string group;  // "idem_service", or "" for the superuser
  bool superuser = false;
};

struct Catalog {
  std::vector<Function> functions;
  std::vector<std::string> tables;  // schema idem's tables, for the state digest
};

// Reads schema idem from the database at `conninfo` (as a superuser).
Catalog load_catalog(const std::string& conninfo, const std::vector<Role>& roles);

}  // namespace idem::fuzz_sql
