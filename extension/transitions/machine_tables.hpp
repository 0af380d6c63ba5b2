// The tables an operator registered for idem.enforce_transitions (idem.machine_tables): which
// machine guards which column, which column keys the row and which names its tenant.
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem::machines {

// Plain data, palloc'd in the memory context current at the call.
struct TableRegistration {
  bool schema_outdated;    // no idem.machine_tables: the schema predates this library
  bool found;
  bool ambiguous;          // several registrations and no status column to choose by
  const char* table_name;  // the registered table (a partition's registered ancestor), schema-qualified
  const char* machine;
  const char* status_column;
  const char* key_column;  // may be null
  const char* tenant_column;
};

// PostgreSQL only (call it guarded): the registration guarding `rel` (or, for a partition, its
// nearest registered ancestor), for `status_column` (null: the table's only one), read as
// `owner`: the roles writing guarded tables need no privilege on the registry.
void read_registration(Relation rel, const char* status_column, Oid owner, TableRegistration* out);

}  // namespace idem::machines
