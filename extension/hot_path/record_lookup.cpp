#include "extension/hot_path/record_lookup.hpp"

#include <cstring>

namespace idem::hot {
namespace {

constexpr const char* kColumnNames[field::kCount] = {
    "status", "generation", "payload_hash", "mutation_type", "recovery_point", "response_status", "response_headers",
    "response_body", "order_id", "lease_expires_at", "expires_at", "attempts_in_generation",
    "payload_pinned", "key_scope", "payload_members"};
// Columns a schema older than this library may lack (the library is installed before ALTER
// EXTENSION UPDATE runs): read as NULL.
constexpr bool optional_column(int f) {
  return f == field::kPayloadPinned || f == field::kKeyScope || f == field::kPayloadMembers;
}

// idem.keys and its primary key, learnt at the first read of a backend; the column numbers of
// the table read last (idem.keys, or on Citus a tenant's shard of it, whose columns are numbered
// afresh). Forgotten by any relcache invalidation of either (an upgrade that adds, drops or
// rewrites columns, a dropped and re-created extension).
struct Layout {
  Oid keys = InvalidOid;
  Oid primary_key = InvalidOid;
  Oid read = InvalidOid;  // the table attnum describes
  AttrNumber attnum[field::kCount] = {};
} layout;

void forget(Datum, Oid relid) {
  if (relid == InvalidOid || relid == layout.keys) layout = Layout{};
  if (relid == layout.read) layout.read = InvalidOid;
}

void learn_layout(Relation keys) {
  layout.read = InvalidOid;  // until every column is found
  const TupleDesc desc = RelationGetDescr(keys);
  for (int f = 0; f < field::kCount; ++f) {
    AttrNumber found = InvalidAttrNumber;
    for (int i = 0; i < desc->natts && found == InvalidAttrNumber; ++i) {
      const Form_pg_attribute a = TupleDescAttr(desc, i);
      if (!a->attisdropped && std::strcmp(NameStr(a->attname), kColumnNames[f]) == 0) found = a->attnum;
    }
    if (found == InvalidAttrNumber && !optional_column(f)) elog(ERROR, "pg_idempotency: idem.keys has no column %s", kColumnNames[f]);
    layout.attnum[f] = found;
  }
  layout.read = RelationGetRelid(keys);
}

void find_keys() {
  if (layout.keys != InvalidOid) return;
  const Oid ns = get_namespace_oid("idem", false);
  const Oid table = get_relname_relid("keys", ns);
  const Oid index = get_relname_relid("keys_pkey", ns);
  if (table == InvalidOid || index == InvalidOid) elog(ERROR, "pg_idempotency: idem.keys or its primary key keys_pkey is missing");
  layout.primary_key = index;  // both or neither: a failed lookup caches nothing
  layout.keys = table;
}

}  // namespace

bool keys_have_payload_members_unsafe() {
  find_keys();
  if (layout.read != layout.keys) {
    Relation keys = table_open(layout.keys, AccessShareLock);  // held to the end of the transaction, as a statement's
    if (layout.read != RelationGetRelid(keys)) learn_layout(keys);
    table_close(keys, NoLock);
  }
  return layout.attnum[field::kPayloadMembers] != InvalidAttrNumber;
}

void read_record_unsafe(Oid shard, Oid shard_index, Datum tenant_text, Datum digest_bytea, Record* out) {
  if (shard == InvalidOid) find_keys();
  // Opening may take in an invalidation that resets the layout: the numbers used are these.
  const Oid keys_oid = shard != InvalidOid ? shard : layout.keys;
  const Oid primary_key = shard != InvalidOid ? shard_index : layout.primary_key;
  Relation keys = table_open(keys_oid, AccessShareLock);  // held to the end of the transaction, as a statement's
  if (layout.read != keys_oid) learn_layout(keys);
  AttrNumber attnum[field::kCount];
  std::memcpy(attnum, layout.attnum, sizeof attnum);
  out->has_key_scope = attnum[field::kKeyScope] != InvalidAttrNumber;
  out->has_payload_members = attnum[field::kPayloadMembers] != InvalidAttrNumber;

  // What SPI does before a statement of a VOLATILE function: a new snapshot (READ COMMITTED), the
  // command counter moved on so that this transaction's earlier writes are seen.
  PushActiveSnapshot(GetTransactionSnapshot());
  CommandCounterIncrement();
  UpdateActiveSnapshotCommandId();

  // The index scan itself, not systable_beginscan: that one reads the heap instead when a
  // session sets ignore_system_indexes (any role may, at connection start), a full scan of the
  // store per call. Index columns 1 and 2 are (tenant_id, scope_digest).
  Relation index = index_open(primary_key, AccessShareLock);  // held to the end of the transaction too
  ScanKeyData key[2];
  ScanKeyInit(&key[0], 1, BTEqualStrategyNumber, F_TEXTEQ, tenant_text);
  key[0].sk_collation = C_COLLATION_OID;  // tenant ids compare bytewise (the column is COLLATE "C")
  ScanKeyInit(&key[1], 2, BTEqualStrategyNumber, F_BYTEAEQ, digest_bytea);
  TupleTableSlot* slot = table_slot_create(keys, nullptr);
  IndexScanDesc scan = index_beginscan(keys, index, GetActiveSnapshot(), 2, 0);
  index_rescan(scan, key, 2, nullptr, 0);
  out->found = index_getnext_slot(scan, ForwardScanDirection, slot);
  if (out->found) {
    bool should_free = false;
    HeapTuple row = ExecFetchSlotHeapTuple(slot, false, &should_free);
    const TupleDesc desc = RelationGetDescr(keys);
    for (int f = 0; f < field::kCount; ++f) {
      if (attnum[f] == InvalidAttrNumber) {  // an optional column this schema lacks
        out->null[f] = true;
        out->value[f] = Datum(0);
        continue;
      }
      const Form_pg_attribute a = TupleDescAttr(desc, attnum[f] - 1);
      const Datum v = heap_getattr(row, attnum[f], desc, &out->null[f]);
      out->value[f] = out->null[f] ? Datum(0) : datumCopy(v, a->attbyval, a->attlen);
    }
    out->xmin = HeapTupleHeaderGetXmin(row->t_data);
    if (should_free) heap_freetuple(row);
  }
  index_endscan(scan);
  ExecDropSingleTupleTableSlot(slot);
  index_close(index, NoLock);
  PopActiveSnapshot();
  table_close(keys, NoLock);
}

void forget_record_layout(Oid relid) { forget(0, relid); }

}  // namespace idem::hot
