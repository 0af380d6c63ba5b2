// The outbox's commit sequencing (docs/outbox.md). idem.emit notes every (tenant, topic) group its
// transaction writes to and draws the transaction's outbox id; at PRE_COMMIT (and PRE_PREPARE),
// after every deferred trigger has run, a transaction callback locks all noted groups in one
// global order and has idem._outbox_sequence_group draw each one's commit position. The locks are
// held until the commit is visible, so a group's positions are its commit order.
#include <algorithm>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/keys/key_validation.hpp"
#include "extension/boundary.hpp"
#include "extension/citus/citus_mode.hpp"
#include "extension/datum_convert.hpp"
#include "extension/gucs.hpp"
#include "extension/outbox_functions.hpp"

namespace idem {
namespace {

struct Group {
  std::string tenant;
  std::string topic;
  uint64 lock_key;
  bool operator<(const Group& o) const {
    if (lock_key != o.lock_key) return lock_key < o.lock_key;
    if (tenant != o.tenant) return tenant < o.tenant;
    return topic < o.topic;
  }
  bool operator==(const Group& o) const { return tenant == o.tenant && topic == o.topic; }
};

// The groups this backend's current transaction emitted to, and its outbox id (drawn from
// idem.outbox_txn_seq at the first emit: unlike an xid it is never reused, also in a cluster restored
// from a dump). A group noted in a subtransaction that rolled back stays noted: at commit it is
// locked and, having no event, left without a commit row.
std::vector<Group> noted_groups;
std::set<std::pair<std::string, std::string>> noted_names;  // the same groups, for the lookup
int64 transaction_outbox_id = 0;
Oid transaction_outbox_id_from = InvalidOid;  // the sequence it came from (DROP/CREATE EXTENSION)
LocalTransactionId noted_in = InvalidLocalTransactionId;

std::vector<Group>& groups_of_this_transaction() {
  if (noted_in != MyProc->lxid) {
    noted_groups.clear();
    noted_names.clear();
    transaction_outbox_id = 0;
    transaction_outbox_id_from = InvalidOid;
    noted_in = MyProc->lxid;
  }
  return noted_groups;
}

Oid idem_relation(const char* name) {
  const Oid ns = pg::call(get_namespace_oid, "idem", false);
  return pg::call(get_relname_relid, name, ns);
}

// Groups map onto a fixed set of lock stripes, so a transaction that emits to ten thousand
// groups holds at most this many locks (the shared lock table is small). A group always maps to
// the same stripe, so the order per group is kept; two groups on one stripe only wait for each
// other's commits.
constexpr uint64 kLockStripes = 1024;

uint64 group_lock_key(const std::string& tenant, const std::string& topic) {
  std::string bytes = tenant;
  bytes.push_back('\0');  // neither part holds a NUL (text), so the pair is unambiguous
  bytes += topic;
  const uint64 hash = pg::call(hash_bytes_extended, reinterpret_cast<const unsigned char*>(bytes.data()),
                               static_cast<int>(bytes.size()), uint64(0x6f7574626f78ULL));
  return hash % kLockStripes;
}

// A group's lock: a transaction-level advisory lock in our own tag space (field4 = 4; keys use 3,
// SQL's pg_advisory_* use 1 and 2).
LOCKTAG group_lock_tag(uint64 key) {
  LOCKTAG tag;
  SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, static_cast<uint32>(key >> 32), static_cast<uint32>(key), 4);
  return tag;
}

std::string_view required(const std::optional<std::string_view>& value, const char* what) {
  if (!value) throw Error(ErrorCode::ArgumentInvalid, std::string(what) + " must not be NULL");
  return *value;
}

void note(std::string tenant, std::string topic) {
  std::vector<Group>& groups = groups_of_this_transaction();
  if (!noted_names.emplace(tenant, topic).second) return;
  const uint64 key = group_lock_key(tenant, topic);
  groups.push_back(Group{std::move(tenant), std::move(topic), key});
}

// _outbox_note(tenant, topic, key, payload) -> bigint: check what emit stores (the payload's size), remember
// the group for the commit-time sequencing, and return the transaction's outbox id.
Datum outbox_note(FunctionCallInfo fcinfo) {
  // Every argument is detoasted before a C++ object lives in this frame (the payload is only
  // measured, never read).
  const auto tenant = datum::text_arg(fcinfo, 0);
  const auto topic = datum::text_arg(fcinfo, 1);
  const auto key = datum::text_arg(fcinfo, 2);
  if (PG_ARGISNULL(3)) throw Error(ErrorCode::ArgumentInvalid, "payload must not be NULL (use '{}'::jsonb for an empty event)");
  const Size payload_bytes = pg::call(toast_raw_datum_size, PG_GETARG_DATUM(3));
  if (payload_bytes > static_cast<Size>(gucs::max_payload_bytes)) {
    throw Error(ErrorCode::PayloadTooLarge,
                "event payload of " + std::to_string(payload_bytes) + " bytes exceeds idem.max_payload_bytes (" +
                    std::to_string(gucs::max_payload_bytes) + " bytes)",
                "Emit a reference to the data (an order id) rather than the data itself.");
  }
  keys::validate_scope_part(required(tenant, "tenant"), "tenant", keys::kMaxTenantBytes, false);
  if (key) keys::validate_scope_part(*key, "key", keys::kMaxScopePartBytes, false);
  note(std::string(*tenant), std::string(required(topic, "topic")));
  const Oid seq = idem_relation("outbox_txn_seq");
  if (transaction_outbox_id == 0 || transaction_outbox_id_from != seq) {
    transaction_outbox_id = pg::call(nextval_internal, seq, false);
    transaction_outbox_id_from = seq;
  }
  return Int64GetDatum(transaction_outbox_id);
}

// Prepared once per backend (the plan cache revalidates it after DDL): one node's, and Citus's,
// where commit time is outside any delegated call and only the tenant's local shards may be
// written (docs/citus.md).
SPIPlanPtr sequence_plans[2] = {nullptr, nullptr};
const char* const kSequenceSql[2] = {"SELECT idem._outbox_sequence_group($1, $2, $3, $4)",
                                     "SELECT idem._outbox_sequence_group_on_shard($1, $2, $3, $4)"};

// One group's commit position, drawn as the extension's owner. Plain C: called through pg::call.
void sequence_group_unsafe(const char* tenant, int tenant_len, const char* topic, int topic_len, int64 outbox_id,
                           bool notify, bool on_citus) {
  Oid owner = InvalidOid;
  HeapTuple ns = SearchSysCache1(NAMESPACENAME, CStringGetDatum("idem"));
  if (!HeapTupleIsValid(ns)) elog(ERROR, "schema idem is missing");
  owner = reinterpret_cast<Form_pg_namespace>(GETSTRUCT(ns))->nspowner;
  ReleaseSysCache(ns);
  Oid saved_user = InvalidOid;
  int saved_context = 0;
  GetUserIdAndSecContext(&saved_user, &saved_context);
  // An error below aborts the transaction, which restores the user itself.
  SetUserIdAndSecContext(owner, saved_context | SECURITY_LOCAL_USERID_CHANGE);
  SPI_connect();
  PushActiveSnapshot(GetTransactionSnapshot());
  const int which = on_citus ? 1 : 0;
  if (sequence_plans[which] == nullptr) {
    Oid types[4] = {TEXTOID, TEXTOID, INT8OID, BOOLOID};
    SPIPlanPtr plan = SPI_prepare(kSequenceSql[which], 4, types);
    if (plan == nullptr || SPI_keepplan(plan) != 0) elog(ERROR, "cannot prepare \"%s\"", kSequenceSql[which]);
    sequence_plans[which] = plan;
  }
  SPIPlanPtr sequence_plan = sequence_plans[which];
  Datum values[4] = {PointerGetDatum(cstring_to_text_with_len(tenant, tenant_len)),
                     PointerGetDatum(cstring_to_text_with_len(topic, topic_len)), Int64GetDatum(outbox_id),
                     BoolGetDatum(notify)};
  if (SPI_execute_plan(sequence_plan, values, nullptr, false, 1) != SPI_OK_SELECT) {
    elog(ERROR, "idem._outbox_sequence_group failed");
  }
  PopActiveSnapshot();
  SPI_finish();
  SetUserIdAndSecContext(saved_user, saved_context);
}

// At PRE_COMMIT / PRE_PREPARE of a transaction that emitted: lock its groups in one order shared
// by all backends (two committers never wait on each other in a circle, whatever order they
// emitted in), then, as the extension's owner, draw each group's commit position.
void sequence_groups(bool notify) {
  std::vector<Group> groups = groups_of_this_transaction();
  std::sort(groups.begin(), groups.end());
  uint64 locked = UINT64_MAX;
  for (const Group& g : groups) {
    if (g.lock_key == locked) continue;  // sorted: each stripe once
    const LOCKTAG tag = group_lock_tag(g.lock_key);
    (void)pg::call(LockAcquire, &tag, LOCKMODE(ExclusiveLock), false, false);
    locked = g.lock_key;
  }
  const int64 outbox_id = transaction_outbox_id;
  const bool on_citus = citus::distributed();
  for (const Group& g : groups) {
    pg::call(sequence_group_unsafe, g.tenant.data(), static_cast<int>(g.tenant.size()), g.topic.data(),
             static_cast<int>(g.topic.size()), outbox_id, notify, on_citus);
  }
}

// The newest version of (tenant, consumer, topic)'s state under the latest snapshot, 0 when none.
// Plain C: called through pg::call.
// On Citus (citus_mode.hpp) the table here is a shell: the tenant's local shard is read.
int64 newest_state_unsafe(text* tenant, text* consumer, text* topic, bool on_citus) {
  const Oid ns = get_namespace_oid("idem", false);
  Oid rel_oid = get_relname_relid("outbox_cursor_states", ns);
  Oid index_oid = get_relname_relid("outbox_cursor_states_pkey", ns);
  if (on_citus) citus::local_shard_unsafe("outbox_cursor_states", "outbox_cursor_states_pkey", tenant, &rel_oid, &index_oid);
  Relation rel = table_open(rel_oid, AccessShareLock);
  Relation index = index_open(index_oid, AccessShareLock);
  ScanKeyData keys[3];
  ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_TEXTEQ, PointerGetDatum(tenant));
  ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_TEXTEQ, PointerGetDatum(consumer));
  ScanKeyInit(&keys[2], 3, BTEqualStrategyNumber, F_TEXTEQ, PointerGetDatum(topic));
  for (ScanKeyData& k : keys) k.sk_collation = C_COLLATION_OID;
  Snapshot latest = RegisterSnapshot(GetLatestSnapshot());
  SysScanDesc scan = systable_beginscan_ordered(rel, index, latest, 3, keys);
  int64 found = 0;
  HeapTuple tuple = systable_getnext_ordered(scan, BackwardScanDirection);
  if (HeapTupleIsValid(tuple)) {
    bool isnull = false;
    const Datum value = heap_getattr(tuple, 4, RelationGetDescr(rel), &isnull);
    if (!isnull) found = DatumGetInt64(value);
  }
  systable_endscan_ordered(scan);
  UnregisterSnapshot(latest);
  index_close(index, AccessShareLock);
  table_close(rel, AccessShareLock);
  return found;
}

// _outbox_newest_state(tenant, consumer, topic) -> bigint: the newest version of the group's
// consumer state in the latest committed data, 0 when there is none. A REPEATABLE READ or
// SERIALIZABLE caller compares it with the version its snapshot sees: newer state it cannot see
// is a serialization failure, never a stale cursor.
Datum outbox_newest_state(FunctionCallInfo fcinfo) {
  text* tenant = PG_GETARG_TEXT_PP(0);  // detoasted here, before any C++ object lives
  text* consumer = PG_GETARG_TEXT_PP(1);
  text* topic = PG_GETARG_TEXT_PP(2);
  const int64 version = pg::call(newest_state_unsafe, tenant, consumer, topic, citus::distributed());
  return Int64GetDatum(version);
}

}  // namespace

void sequence_outbox_at_commit(XactEvent event, void*) {
  if (event != XACT_EVENT_PRE_COMMIT && event != XACT_EVENT_PRE_PREPARE) {
    if (event != XACT_EVENT_PARALLEL_PRE_COMMIT) noted_in = InvalidLocalTransactionId;  // ended
    return;
  }
  if (noted_in != MyProc->lxid || noted_groups.empty()) return;
  // A prepared transaction cannot NOTIFY: its consumers find the events at their next poll.
  const bool notify = event == XACT_EVENT_PRE_COMMIT && gucs::outbox_notify;
  Guard([&] { sequence_groups(notify); });
  noted_in = InvalidLocalTransactionId;
}

}  // namespace idem

IDEM_SQL_FUNCTION(idem_outbox_newest_state, idem::outbox_newest_state)

IDEM_SQL_FUNCTION(idem_outbox_note, idem::outbox_note)
