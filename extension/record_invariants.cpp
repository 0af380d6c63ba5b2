// The invariants of idem.keys and idem.mutations, checked by a C row trigger instead of CHECK
// constraints, and idem.keys.purge_after, kept by the same trigger (with_purge_after). PostgreSQL
// parses every CHECK expression again from its stored text in each statement that writes the
// table (ExecRelCheck runs stringToNode per query), a large share of a hot-path write's cost
// (docs/hot-path.md). The rules, their names, the SQLSTATE (23514) and the message are the
// constraints' own.
// A CHECK fails only when its expression is false, never when it is NULL; so do these.
#include <cstring>
#include <string_view>
#include <optional>

#include "extension/boundary.hpp"

namespace idem {
namespace {

// A column's value, or nullopt when SQL NULL. Columns are found by name: tables that went through
// upgrades have dropped columns in between.
struct Row {
  HeapTuple tuple;
  TupleDesc desc;
  // The column's attribute number, or InvalidAttrNumber when the table has none of that name.
  AttrNumber attnum(const char* name) const {
    for (int i = 0; i < desc->natts; ++i) {
      const Form_pg_attribute a = TupleDescAttr(desc, i);
      if (!a->attisdropped && std::strcmp(NameStr(a->attname), name) == 0) return a->attnum;
    }
    return InvalidAttrNumber;
  }
  std::optional<Datum> get(const char* name) const {
    const AttrNumber n = attnum(name);
    if (n == InvalidAttrNumber) return std::nullopt;
    bool is_null = false;
    const Datum v = heap_getattr(tuple, n, desc, &is_null);  // reads the tuple only: detoasts nothing
    if (is_null) return std::nullopt;
    return v;
  }
  // NULL: nullopt; otherwise whether the text equals one of `values`.
  std::optional<bool> text_in(const char* name, std::initializer_list<const char*> values) const {
    const auto v = get(name);
    if (!v) return std::nullopt;
    const Datum d = *v;
    const text* t = pg::guarded([&] { return DatumGetTextPP(d); });
    const std::size_t n = VARSIZE_ANY_EXHDR(t);
    for (const char* candidate : values) {
      if (std::strlen(candidate) == n && std::memcmp(VARDATA_ANY(t), candidate, n) == 0) return true;
    }
    return false;
  }
  std::optional<std::size_t> octet_length(const char* name) const {
    const auto v = get(name);
    if (!v) return std::nullopt;
    return pg::call(toast_raw_datum_size, *v) - VARHDRSZ;
  }
};

// SQL's three-valued logic, as far as the constraints need it.
using Tri = std::optional<bool>;
Tri equal(Tri a, Tri b) { return a && b ? Tri(*a == *b) : std::nullopt; }
Tri negate(Tri a) { return a ? Tri(!*a) : std::nullopt; }
Tri either(Tri a, Tri b) {
  if ((a && *a) || (b && *b)) return true;
  if (a && b) return false;
  return std::nullopt;
}
Tri both(Tri a, Tri b) {
  if ((a && !*a) || (b && !*b)) return false;
  if (a && b) return true;
  return std::nullopt;
}
bool fails(Tri t) { return t && !*t; }

// The name of the first rule the row breaks, or nullptr.
const char* broken_key_rule(const Row& r) {
  const auto attempt = r.get("attempt");
  if (attempt && DatumGetInt64(*attempt) <= 0) return "keys_attempt_check";
  const Tri in_progress = r.text_in("status", {"in_progress"});
  const Tri resolved = r.text_in("status", {"resolved"});
  if (fails(equal(in_progress, Tri(r.get("lease_expires_at").has_value())))) return "keys_check";
  if (fails(either(negate(resolved), Tri(r.get("response_status").has_value())))) return "keys_check2";
  const auto generation = r.get("generation");
  if (generation && DatumGetInt32(*generation) <= 0) return "keys_generation_check";
  if (fails(equal(Tri(!r.get("expires_at").has_value()), both(negate(resolved), Tri(r.get("recovery_point").has_value()))))) {
    return "keys_history_check";
  }
  if (fails(r.text_in("mutation_type", {"create", "capture", "refund", "void"}))) return "keys_mutation_type_check";
  const auto hash_length = r.octet_length("payload_hash");
  if (hash_length && *hash_length != 32) return "keys_payload_hash_check";
  const auto status = r.get("response_status");  // smallint
  if (status && (DatumGetInt16(*status) < 100 || DatumGetInt16(*status) > 599)) return "keys_response_status_check";
  const auto digest_length = r.octet_length("scope_digest");
  if (digest_length && *digest_length != 32) return "keys_scope_digest_check";
  if (fails(r.text_in("status", {"in_progress", "resolved", "released"}))) return "keys_status_check";
  const auto tenant_length = r.octet_length("tenant_id");
  if (tenant_length && *tenant_length == 0) return "keys_tenant_id_check";
  // NULL on a record made before the column existed: it keeps the route scope it was made under.
  if (fails(r.text_in("key_scope", {"tenant", "route"}))) return "keys_key_scope_check";
  return nullptr;
}

const char* broken_mutation_rule(const Row& r) {
  if (fails(r.text_in("mutation_type", {"create", "capture", "refund", "void"}))) return "mutations_mutation_type_check";
  if (fails(r.text_in("outcome", {"replay", "mismatch", "in_progress", "checkpoint", "completed", "released", "abandoned",
                                  "resolved_by_operator", "key_reused"}))) {
    return "mutations_outcome_check";
  }
  return nullptr;
}

// "Failing row contains (...)." as PostgreSQL words it for a CHECK: every column's text, each
// clipped to 64 bytes, NULL as null. Plain C (output functions may elog): called through pg::call.
char* failing_row_unsafe(HeapTuple tuple, TupleDesc desc) {
  StringInfoData buf;
  initStringInfo(&buf);
  appendStringInfoString(&buf, "Failing row contains (");
  bool first = true;
  for (int i = 0; i < desc->natts; ++i) {
    const Form_pg_attribute a = TupleDescAttr(desc, i);
    if (a->attisdropped) continue;
    if (!first) appendStringInfoString(&buf, ", ");
    first = false;
    bool is_null = false;
    const Datum v = heap_getattr(tuple, i + 1, desc, &is_null);
    if (is_null) {
      appendStringInfoString(&buf, "null");
      continue;
    }
    Oid output = InvalidOid;
    bool varlena = false;
    getTypeOutputInfo(a->atttypid, &output, &varlena);
    const char* text = OidOutputFunctionCall(output, v);
    const int len = static_cast<int>(strlen(text));
    const int clipped = pg_mbcliplen(text, len, 64);
    appendBinaryStringInfo(&buf, text, clipped);
    if (clipped < len) appendStringInfoString(&buf, "...");
  }
  appendStringInfoString(&buf, ").");
  return buf.data;
}

// A NOT NULL column left NULL: PostgreSQL refuses it (23502) after the BEFORE triggers, and it
// did so before any CHECK; the trigger leaves that refusal to it.
bool breaks_not_null(HeapTuple tuple, TupleDesc desc) {
  for (int i = 0; i < desc->natts; ++i) {
    const Form_pg_attribute a = TupleDescAttr(desc, i);
    if (a->attnotnull && !a->attisdropped && heap_attisnull(tuple, i + 1, desc)) return true;
  }
  return false;
}

// to_timestamp(extract(epoch FROM (attempted - 'epoch'::timestamptz) + ttl)), through the
// functions SQL would call, so with the same rounding. Plain C (may elog): called through pg::call.
Datum purge_after_unsafe(Datum attempted, Datum ttl) {
  const Datum since_epoch = DirectFunctionCall2(timestamp_mi, attempted, TimestampTzGetDatum(SetEpochTimestamp()));
  const Datum elapsed = DirectFunctionCall2(interval_pl, since_epoch, ttl);
  const Datum seconds = DirectFunctionCall2(extract_interval, CStringGetTextDatum("epoch"), elapsed);
  return DirectFunctionCall1(float8_timestamptz, DirectFunctionCall1(numeric_float8, seconds));
}

// purge_after as the column's former generation expression computed it: CASE WHEN expires_at IS
// NOT NULL THEN purge_after_unsafe(coalesce(attempted_at, created_at), ttl) END. The trigger keeps
// the column, whoever writes the row (an explicit value is replaced), because a generated column
// made PostgreSQL parse its expression from text in every statement that writes the table
// (ExecInitStoredGenerated).
HeapTuple with_purge_after(HeapTuple tuple, const Row& r) {
  int column = r.attnum("purge_after");
  // Absent, or still generated (an older schema on this library): PostgreSQL computes it.
  if (column == InvalidAttrNumber || TupleDescAttr(r.desc, column - 1)->attgenerated != '\0') return tuple;
  std::optional<Datum> attempted = r.get("attempted_at");
  if (!attempted) attempted = r.get("created_at");
  const std::optional<Datum> ttl = r.get("ttl");
  Datum value = 0;
  bool is_null = !r.get("expires_at") || !attempted || !ttl;
  if (!is_null) value = pg::call(purge_after_unsafe, *attempted, *ttl);
  return pg::call(heap_modify_tuple_by_cols, tuple, r.desc, 1, &column, &value, &is_null);
}

// The table a trigger fired on, as our schema names it: on Citus the trigger fires on a shard,
// named after its table and shard id (keys_102028); only our tables carry this trigger. Matched
// by the bare name, a shard's rows went unchecked and without purge_after, which purge_expired
// reads: on Citus it never purged a record (tests/citus).
std::string_view unsharded_name(const char* relname) {
  const std::string_view name(relname);
  const std::size_t cut = name.rfind('_');
  if (cut == std::string_view::npos || cut + 1 == name.size()) return name;
  for (std::size_t i = cut + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, cut);
}

// idem._check_invariants(): BEFORE INSERT OR UPDATE FOR EACH ROW on idem.keys and idem.mutations.
Datum check_invariants(FunctionCallInfo fcinfo) {
  TriggerData* trigger = reinterpret_cast<TriggerData*>(fcinfo->context);
  if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_FOR_ROW(trigger->tg_event) || !TRIGGER_FIRED_BEFORE(trigger->tg_event) ||
      TRIGGER_FIRED_BY_DELETE(trigger->tg_event)) {
    throw Error(ErrorCode::Internal, "idem._check_invariants must run BEFORE INSERT OR UPDATE FOR EACH ROW");
  }
  HeapTuple tuple = TRIGGER_FIRED_BY_UPDATE(trigger->tg_event) ? trigger->tg_newtuple : trigger->tg_trigtuple;
  Relation rel = trigger->tg_relation;
  const char* table = RelationGetRelationName(rel);
  const std::string_view base = unsharded_name(table);
  const bool keys = base == "keys";
  const Row row{tuple, RelationGetDescr(rel)};
  const char* broken = nullptr;
  const char* detail = nullptr;
  const char* schema = nullptr;
  if (!breaks_not_null(tuple, row.desc)) {
    if (keys) broken = broken_key_rule(row);
    else if (base == "mutations") broken = broken_mutation_rule(row);
  }
  if (broken != nullptr) {
    detail = pg::call(failing_row_unsafe, tuple, row.desc);
    schema = pg::call(get_namespace_name, RelationGetNamespace(rel));
  }
  if (broken != nullptr) {
    throw StandardError("23514", std::string("new row for relation \"") + table + "\" violates check constraint \"" + broken + "\"",
                        {detail, schema, table, broken});
  }
  // After the rules, as the generated column was computed after this trigger: a row that
  // breaks a rule is refused for that first, and its DETAIL shows purge_after as written.
  if (keys) tuple = with_purge_after(tuple, row);
  return PointerGetDatum(tuple);
}

}  // namespace
}  // namespace idem

IDEM_SQL_FUNCTION(idem_check_invariants, idem::check_invariants)
