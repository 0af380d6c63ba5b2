#include "core/statements/hot_statements.hpp"

#include <stdexcept>

namespace idem::statements {
namespace {

constexpr const char* kAuditColumnNames[] = {
#define AUDIT_COLUMN(name, type) #name,
#include "core/statements/audit_columns.def"
#undef AUDIT_COLUMN
};

constexpr const char* kRecordParamNames[] = {
#define RECORD_PARAM(name, type) #name,
#include "core/statements/record_params.def"
#undef RECORD_PARAM
};

constexpr const char* kRecordColumns[] = {
#define RECORD_COLUMN(column, expression) #column,
#include "core/statements/record_columns.def"
#undef RECORD_COLUMN
};

constexpr const char* kRecordValues[] = {
#define RECORD_COLUMN(column, expression) expression,
#include "core/statements/record_columns.def"
#undef RECORD_COLUMN
};

constexpr int kRecordColumnCount = sizeof kRecordColumns / sizeof kRecordColumns[0];

// The record params, then the pending record's own (hot_statements.hpp numbers them).
constexpr const char* kPendingParamNames[] = {
#define RECORD_PARAM(name, type) #name,
#include "core/statements/record_params.def"
#undef RECORD_PARAM
    "attempt", "generation",
    "response_status", "response_headers", "response_body", "order_id", "handler_response", "local_status", "resolved_at"};
static_assert(sizeof kPendingParamNames / sizeof kPendingParamNames[0] == kResolvedRecordParams);

bool is_record_column(std::string_view name) {
  for (const char* column : kRecordColumns) {
    if (name == column) return true;
  }
  return false;
}

// What complete writes (as its UPDATE of an acquired record does, extension/hot_path/complete.cpp).
struct ColumnValue {
  const char* column;
  const char* value;
};
constexpr ColumnValue kResolvedColumns[] = {
    {"status", "'resolved'"},
    {"lease_expires_at", "NULL"},
    {"expires_at", "{resolved_at} + {ttl}"},
    {"response_status", "{response_status}"},
    {"response_headers", "coalesce({response_headers}, jsonb_build_object())"},
    {"response_body", "coalesce({response_body}, ''::bytea)"},
    {"order_id", "{order_id}"},
    {"handler_response", "{handler_response}"},
    {"local_status", "{local_status}"},
    {"resolved_at", "{resolved_at}"},
};

const std::string& table_named(const Tables& tables, std::string_view name) {
  if (name == "keys") return tables.keys;
  if (name == "retired_keys") return tables.retired_keys;
  if (name == "mutations") return tables.mutations;
  throw std::logic_error("unknown statement table {@" + std::string(name) + "}");
}

}  // namespace

std::string joined(const char* const* names, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out.append(i == 0 ? "" : ", ").append(names[i]);
  return out;
}

std::string parameter_list(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out.append(i == 1 ? "$" : ", $").append(std::to_string(i));
  return out;
}

std::string with_params(std::string_view text, const char* const* params, int n, const Tables& tables) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      out.push_back(text[i]);
      continue;
    }
    const std::size_t end = text.find('}', i);
    if (end == std::string_view::npos) throw std::logic_error("unclosed statement parameter at " + std::string(text.substr(i)));
    const std::string_view name = text.substr(i + 1, end - i - 1);
    if (!name.empty() && name[0] == '@') {
      out.append(table_named(tables, name.substr(1)));
      i = end;
      continue;
    }
    int k = 0;
    while (k < n && name != params[k]) ++k;
    if (k == n) throw std::logic_error("unknown statement parameter {" + std::string(name) + "}");
    out.append("$").append(std::to_string(k + 1));
    i = end;
  }
  return out;
}

const char* const* audit_column_names() { return kAuditColumnNames; }

std::string audit_insert(const Tables& tables) {
  const std::string columns = joined(kAuditColumnNames, kAuditColumns), values = parameter_list(kAuditColumns);
  if (tables.shards) {
    return "INSERT INTO " + tables.mutations + " (mutation_id, " + columns +
           ") VALUES (nextval('idem.mutations_mutation_id_seq'), " + values + ")";
  }
  return "INSERT INTO " + tables.mutations + " (" + columns + ") VALUES (" + values + ")";
}

std::string record_insert(RecordSchema schema, const Tables& tables) {
  const bool key_scope = schema != RecordSchema::kBeforeKeyScope;
  const int columns = kRecordColumnCount - (schema == RecordSchema::kCurrent ? 0 : 1);  // payload_members is last
  const int params = kRecordParams - (schema == RecordSchema::kCurrent ? 0 : key_scope ? 1 : 2);
  const std::string values = joined(kRecordValues, columns);
  std::string text = "INSERT INTO {@keys} AS k (" + joined(kRecordColumns, columns) + ")";
  if (key_scope) {
    text += " SELECT " + values +
            " WHERE NOT ({key_scope_tenant} AND EXISTS (SELECT 1 FROM {@keys} o WHERE o.tenant_id = {tenant_id} COLLATE \"C\""
            " AND o.client_key = {client_key} COLLATE \"C\" AND o.key_scope = 'tenant'))";
  } else {
    text += " VALUES (" + values + ")";
  }
  text += " ON CONFLICT DO NOTHING RETURNING k.attempt, k.generation, k.lease_expires_at";
  return with_params(text, kRecordParamNames, params, tables);
}

std::string pending_record_insert(PendingWrite write) {
  const bool resolved = write == PendingWrite::kResolved;
  std::string columns, values;
  const auto add = [&](std::string_view column, std::string_view value) {
    columns.append(columns.empty() ? "" : ", ").append(column);
    values.append(values.empty() ? "" : ", ").append(value);
  };
  for (int i = 0; i < kRecordColumnCount; ++i) {
    const std::string_view column = kRecordColumns[i];
    std::string_view value = kRecordValues[i];
    if (column == "attempt") value = "{attempt}";
    if (column == "generation") value = "{generation}";
    for (const ColumnValue& c : kResolvedColumns) {
      if (resolved && column == c.column) value = c.value;
    }
    add(column, value);
  }
  if (resolved) {
    for (const ColumnValue& c : kResolvedColumns) {
      if (!is_record_column(c.column)) add(c.column, c.value);
    }
  }
  add("key_scope", "CASE WHEN {key_scope_tenant} THEN 'tenant' ELSE 'route' END");
  const std::string text = "INSERT INTO {@keys} (" + columns + ") VALUES (" + values + ")";
  return with_params(text, kPendingParamNames, resolved ? kResolvedRecordParams : kPendingRecordParams);
}

std::string pending_record_check() {
  std::string generation;
  for (int i = 0; i < kRecordColumnCount; ++i) {
    if (std::string_view(kRecordColumns[i]) == "generation") generation = kRecordValues[i];
  }
  const std::string text =
      "SELECT nextval('idem.fencing_token_seq'), " + generation + ", {now} + {lease_interval},"
      " EXISTS (SELECT 1 FROM {@keys} k WHERE k.tenant_id = {tenant_id} COLLATE \"C\" AND k.scope_digest = {scope_digest})"
      " OR ({key_scope_tenant} AND EXISTS (SELECT 1 FROM {@keys} o WHERE o.tenant_id = {tenant_id} COLLATE \"C\""
      " AND o.client_key = {client_key} COLLATE \"C\" AND o.key_scope = 'tenant'))";
  return with_params(text, kRecordParamNames, kRecordParams);
}

}  // namespace idem::statements
