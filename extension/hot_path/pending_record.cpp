// The pending record (pending_record.hpp). Entries live in a few static slots; their values in
// TopTransactionContext, so they end with the transaction whatever happens. Every PostgreSQL
// callback here (the executor hook, the transaction and subtransaction callbacks) is plain code
// around one Guard: no C++ object lives in a frame a PostgreSQL error could unwind.
#include "extension/hot_path/pending_record.hpp"

#include <cstring>

#include "extension/boundary.hpp"
#include "extension/gucs.hpp"
#include "extension/pg/as_user.hpp"

namespace idem::hot::pending {
namespace {

const std::string kInProgressSql = statements::pending_record_insert(statements::PendingWrite::kInProgress);
const std::string kResolvedSql = statements::pending_record_insert(statements::PendingWrite::kResolved);

KeptPlan in_progress_insert = record_plan(kInProgressSql.c_str(), kRecordParams, {INT8OID, INT4OID});
KeptPlan resolved_insert = record_plan(kResolvedSql.c_str(), kRecordParams,
                                       {INT8OID, INT4OID, INT4OID, JSONBOID, BYTEAOID, TEXTOID, JSONBOID, TEXTOID, TIMESTAMPTZOID});

struct Entry {
  RecordParams params;  // by value or in TopTransactionContext
  bool members_null;
  int64 attempt;
  int32 generation;
  Oid owner;                         // the role the record is written as (acquire's)
  Oid keys;                          // the idem.keys it belongs in (a DROP and CREATE EXTENSION make another)
  SubTransactionId made_in;          // where its key's lock was taken (and is held)
  SubTransactionId written_in;       // InvalidSubTransactionId while pending
};

// Usually one: a transaction acquires one new key. A fifth keeps its record as before.
constexpr int kSlots = 4;
Entry slots[kSlots];
int used = 0;
bool writing = false;  // an INSERT of ours is starting: the hook must not write again

void forget(int i) {
  slots[i] = slots[--used];
}

// Plain C: a copy of a parameter's value in the transaction's memory (the types of
// record_params.def; another is a bug of that file).
Datum copied_unsafe(Datum value, Oid type) {
  const bool by_value = type == TIMESTAMPTZOID || type == BOOLOID;
  const bool varlena = type == TEXTOID || type == BYTEAOID;
  if (!by_value && !varlena && type != INTERVALOID) elog(ERROR, "pg_idempotency: a record parameter of type %u", type);
  const int length = type == INTERVALOID ? static_cast<int>(sizeof(Interval)) : by_value ? 8 : -1;
  const MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
  const Datum copy = datumCopy(value, by_value, length);
  MemoryContextSwitchTo(old);
  return copy;
}

std::string_view bytes_of(Datum varlena_datum) {
  const struct varlena* v = pg::guarded([&] { return PG_DETOAST_DATUM_PACKED(varlena_datum); });
  return {VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v)};
}

Args row_of(const Entry& e) {
  Args args = args_of(e.params, kRecordParams, e.members_null);
  return args.add(Int64GetDatum(e.attempt)).add(Int32GetDatum(e.generation));
}

// Marked written before its INSERT starts (the INSERT names idem.keys, so the hook sees it); an
// INSERT that fails aborts the (sub)transaction, whose callback then forgets or restores it.
// A transaction made READ ONLY after its acquire still writes it, as acquire wrote it before
// then: the flag is lifted for the INSERT alone (a subtransaction's abort restores its parent's).
void write(int i, KeptPlan& plan, const Args& args) {
  Entry& e = slots[i];
  e.written_in = GetCurrentSubTransactionId();
  const bool same_level = e.written_in == e.made_in;
  const Oid owner = e.owner;
  if (same_level) forget(i);  // the row now lives where its lock does: nothing left to undo
  const bool read_only = XactReadOnly;
  writing = true;
  XactReadOnly = false;
  pg::as_owner(owner, [&] {
    spi_connect();
    (void)execute(plan, args, 0, SPI_OK_INSERT, "could not write a pending record");
    spi_finish();
  });
  XactReadOnly = read_only;
  writing = false;
}

// The executor hook: a statement about to read or write idem.keys sees the pending records.
ExecutorStart_hook_type previous_executor_start = nullptr;

// Plain C: idem.keys, or InvalidOid once the extension is dropped.
Oid keys_table() {
  const Oid schema = get_namespace_oid("idem", true);
  return OidIsValid(schema) ? get_relname_relid("keys", schema) : InvalidOid;
}

bool names_keys(const PlannedStmt* statement, Oid keys) {
  if (!OidIsValid(keys)) return false;
  ListCell* cell;
  foreach (cell, statement->rtable) {
    const RangeTblEntry* rte = lfirst_node(RangeTblEntry, cell);
    if (rte->rtekind == RTE_RELATION && rte->relid == keys) return true;
  }
  return false;
}

// The statement's snapshot was taken before the records were written: the same snapshot, with a
// command id that sees them (as UpdateActiveSnapshotCommandId does for the active one), in a
// copy of its own so that no other holder of the old one sees more than it did.
void see_own_writes(QueryDesc* query) {
  CommandCounterIncrement();
  if (query->snapshot == nullptr || query->snapshot->snapshot_type != SNAPSHOT_MVCC) return;
  SnapshotData copy = *query->snapshot;
  copy.copied = false;
  copy.regd_count = 0;
  copy.active_count = 0;
  copy.curcid = GetCurrentCommandId(false);
  const Snapshot fresh = RegisterSnapshot(&copy);  // copies it (it is not a copy yet)
  UnregisterSnapshot(query->snapshot);
  query->snapshot = fresh;
}

// Every pending record in_progress, into `keys` (the idem.keys of now).
void write_pending(Oid keys) {
  for (int i = used - 1; i >= 0; --i) {
    if (i >= used || slots[i].written_in != InvalidSubTransactionId) continue;
    if (slots[i].keys != keys) {
      // DROP EXTENSION in the transaction took the record with it, as it took an inserted one;
      // an idem.keys created again after it is another store.
      forget(i);
      continue;
    }
    write(i, in_progress_insert, row_of(slots[i]));
  }
}

void executor_start(QueryDesc* query, int eflags) {
  if (!writing && any() && !IsInParallelMode()) {
    const Oid keys = keys_table();
    if (names_keys(query->plannedstmt, keys)) {
      Guard([keys] { write_pending(keys); });
      see_own_writes(query);
    }
  }
  if (previous_executor_start != nullptr) {
    previous_executor_start(query, eflags);
  } else {
    standard_ExecutorStart(query, eflags);
  }
}

void at_transaction_event(XactEvent event, void*) {
  if (event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PRE_PREPARE) {
    if (!any()) return;
    // Portals are closed by now: SPI needs a snapshot of its own (an error pops it with the rest).
    const bool pushed = !ActiveSnapshotSet();
    if (pushed) PushActiveSnapshot(GetTransactionSnapshot());
    Guard([] { write_all(); });
    if (pushed) PopActiveSnapshot();
    return;
  }
  if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT || event == XACT_EVENT_PREPARE ||
      event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT) {
    used = 0;
    writing = false;
  }
}

// A savepoint released hands its entries (and its key locks) to its parent; one rolled back
// takes those made in it (their locks go with it) and gives back those it wrote.
void at_subtransaction_event(SubXactEvent event, SubTransactionId mine, SubTransactionId parent, void*) {
  if (event == SUBXACT_EVENT_ABORT_SUB) {
    writing = false;
    for (int i = used - 1; i >= 0; --i) {
      if (slots[i].made_in == mine) {
        forget(i);
      } else if (slots[i].written_in == mine) {
        slots[i].written_in = InvalidSubTransactionId;
      }
    }
  } else if (event == SUBXACT_EVENT_COMMIT_SUB) {
    for (int i = used - 1; i >= 0; --i) {
      Entry& e = slots[i];
      if (e.made_in == mine) e.made_in = parent;
      if (e.written_in == mine) e.written_in = parent;
      if (e.written_in == e.made_in) forget(i);
    }
  }
}

}  // namespace

bool may_keep() { return gucs::pending_record && used < kSlots && !IsInParallelMode(); }

void keep(const RecordParams& params, bool members_null, int64 attempt, int32 generation) {
  Entry e{};
#define RECORD_PARAM(name, type) \
  e.params.name = &params.name == &params.payload_members && members_null ? Datum(0) : pg::call(copied_unsafe, params.name, type);
#include "core/statements/record_params.def"
#undef RECORD_PARAM
  e.members_null = members_null;
  e.attempt = attempt;
  e.generation = generation;
  e.owner = GetUserId();
  e.made_in = GetCurrentSubTransactionId();
  e.written_in = InvalidSubTransactionId;
  // The lock the record's INSERT took at acquire, so that what waits for this transaction (a
  // CREATE INDEX, a LOCK TABLE ... SHARE) waits as it did, and the write never waits for them.
  e.keys = pg::call(keys_table);
  pg::call(LockRelationOid, e.keys, LOCKMODE(RowExclusiveLock));
  slots[used++] = e;
}

bool find(std::string_view tenant, std::string_view digest, int64 attempt, std::string_view secret_hash, Held* out) {
  for (int i = 0; i < used; ++i) {
    const Entry& e = slots[i];
    if (e.written_in != InvalidSubTransactionId || e.attempt != attempt) continue;
    if (bytes_of(e.params.scope_digest) != digest || bytes_of(e.params.tenant_id) != tenant ||
        bytes_of(e.params.lease_secret_hash) != secret_hash) {
      continue;
    }
    *out = Held{e.params, e.attempt, e.generation, i};
    return true;
  }
  return false;
}

void write_resolved(const Held& held, const Args& response) {
  Args args = row_of(slots[held.index]);
  for (int i = 0; i < response.n; ++i) args.add(Value{response.values[i], response.nulls[i] == 'n'});
  write(held.index, resolved_insert, args);
}

bool any() {
  for (int i = 0; i < used; ++i) {
    if (slots[i].written_in == InvalidSubTransactionId) return true;
  }
  return false;
}

void write_all() { write_pending(pg::call(keys_table)); }

void install() {
  previous_executor_start = ExecutorStart_hook;
  ExecutorStart_hook = executor_start;
  RegisterXactCallback(at_transaction_event, nullptr);
  RegisterSubXactCallback(at_subtransaction_event, nullptr);
}

}  // namespace idem::hot::pending
