// Reads schema idem's functions and their types from the catalogs, so every function the
// extension installs is fuzzed without a list to keep in step.
#include "tests/fuzz_sql/catalog.hpp"

#include <pqxx/pqxx>

namespace idem::fuzz_sql {
namespace {

Type load_type(pqxx::work& tx, unsigned oid, int depth) {
  const pqxx::row r = tx.exec_params1(
      "SELECT format_type(t.oid, NULL), t.typcategory, t.typtype, t.typelem::int8, t.typrelid::int8,"
      "       format_type(t.typbasetype, NULL), coalesce(c.relkind = 'r', false),"
      "       coalesce(t.typrelid::regclass::text, '')"
      "  FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid WHERE t.oid = $1",
      oid);
  Type type;
  type.name = r[0].as<std::string>();
  type.category = r[1].as<std::string>()[0];
  const char typtype = r[2].as<std::string>()[0];
  type.base = typtype == 'd' ? r[5].as<std::string>() : type.name;
  if (type.category == 'A' && depth < 3) {
    type.element = std::make_shared<Type>(load_type(tx, r[3].as<unsigned>(), depth + 1));
  }
  if (typtype == 'c' && depth < 3) {
    if (r[6].as<bool>()) type.table = r[7].as<std::string>();
    const pqxx::result fields = tx.exec_params(
        "SELECT attname, atttypid::int8 FROM pg_attribute"
        " WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
        r[4].as<unsigned>());
    for (const auto& f : fields) {
      type.fields.emplace_back(f[0].as<std::string>(), load_type(tx, f[1].as<unsigned>(), depth + 1));
    }
  }
  return type;
}

}  // namespace

Catalog load_catalog(const std::string& conninfo, const std::vector<Role>& roles) {
  pqxx::connection conn(conninfo);
  pqxx::work tx(conn);
  Catalog catalog;
  const pqxx::result procs = tx.exec(
      "SELECT p.oid::int8, p.proname, p.oid::regprocedure::text, p.pronargdefaults, p.proretset,"
      "       rt.typtype = 'c', p.prorettype = 'trigger'::regtype, p.provolatile, p.proisstrict"
      "  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
      "  JOIN pg_type rt ON rt.oid = p.prorettype"
      " WHERE n.nspname = 'idem' AND p.prokind = 'f' ORDER BY 3");
  for (const auto& p : procs) {
    Function f;
    const auto oid = p[0].as<unsigned>();
    f.name = p[1].as<std::string>();
    f.signature = p[2].as<std::string>();
    f.defaults = p[3].as<int>();
    f.returns_rows = (p[4].as<bool>() || p[5].as<bool>()) && !p[6].as<bool>();
    f.returns_trigger = p[6].as<bool>();
    f.volatility = p[7].as<std::string>()[0];
    f.strict = p[8].as<bool>();
    // proallargtypes/proargnames/proargmodes cover OUT arguments too; proargtypes only inputs.
    const pqxx::result args = tx.exec_params(
        "SELECT coalesce(p.proargnames[i], ''), a.types[i]::int8,"
        "       coalesce(p.proargmodes[i], 'i') IN ('i', 'b', 'v')"
        "  FROM pg_proc p,"
        "       LATERAL (SELECT coalesce(p.proallargtypes, ARRAY(SELECT unnest(p.proargtypes))) AS types) a,"
        "       LATERAL generate_subscripts(a.types, 1) i"
        " WHERE p.oid = $1 ORDER BY i",
        oid);
    for (const auto& a : args) {
      if (a[2].as<bool>()) {
        f.arg_names.push_back(a[0].as<std::string>());
        f.args.push_back(load_type(tx, a[1].as<unsigned>(), 0));
      } else {
        f.columns.push_back(a[0].as<std::string>());
      }
    }
    if (f.returns_rows && f.columns.empty()) {
      // A composite result without OUT arguments: its type's attributes are the columns.
      const pqxx::result cols = tx.exec_params(
          "SELECT a.attname FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype"
          "  JOIN pg_attribute a ON a.attrelid = t.typrelid"
          " WHERE p.oid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
          oid);
      for (const auto& c : cols) f.columns.push_back(c[0].as<std::string>());
    }
    for (const Role& role : roles) {
      if (tx.exec_params1("SELECT has_function_privilege($1, $2::oid, 'EXECUTE')", role.user, oid)[0]
              .as<bool>()) {
        f.executors.insert(role.user);
      }
    }
    catalog.functions.push_back(std::move(f));
  }
  for (const auto& t : tx.exec(
           "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
           " WHERE n.nspname = 'idem' AND c.relkind IN ('r', 'p') ORDER BY 1")) {
    catalog.tables.push_back(t[0].as<std::string>());
  }
  return catalog;
}

}  // namespace idem::fuzz_sql
