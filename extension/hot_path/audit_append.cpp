// idem._audit as C. On one node the row is written as PostgreSQL's logical-replication apply
// worker writes one (execReplication.c's ExecSimpleRelationInsert on an EState set up by hand:
// BEFORE and AFTER row triggers, constraints and index maintenance, with no planner and no plan's
// executor start-up): 10.1 us a row against 12.6 through a kept SPI plan (bench/exec_simple.sh,
// docs/hot-path.md). Elsewhere it goes through the kept plan: on Citus (the table is a shell
// there), in a read-only transaction or in parallel mode (which the executor refuses by name), for
// an owner that is not a superuser (row security applies to it: the executor checks policies,
// this writer does not), and when idem.mutations has a column the row does not fill (a default
// the executor would compute), a statement-level INSERT trigger, a transition table or a rule.
#include "extension/hot_path/audit_append.hpp"

#include <cstring>
#include <string>

#include "extension/boundary.hpp"
#include "extension/citus/citus_mode.hpp"

namespace idem::hot {
namespace {

const std::string kInsertAuditSql = statements::audit_insert();

KeptPlan insert_audit{kInsertAuditSql.c_str(),
                      kAuditColumns,
                      {
#define AUDIT_COLUMN(name, type) type,
#include "core/statements/audit_columns.def"
#undef AUDIT_COLUMN
                      },
                      nullptr};

std::string audit_insert_sql(const statements::Tables& tables) { return statements::audit_insert(tables); }
KeptPlanPerTables insert_audit_on_shard{audit_insert_sql, insert_audit};

constexpr int kMaxColumns = 64;

// Plain C, through pg::call: the row (audit_columns.def's order) into idem.mutations, its
// mutation_id drawn from the identity's sequence as the identity's default draws it. false,
// having written nothing, when a column of the table is not one the row fills.
bool insert_directly_unsafe(const Args* args) {
  const Oid schema = get_namespace_oid("idem", false);
  const Oid relid = get_relname_relid("mutations", schema);
  const Oid sequence = get_relname_relid("mutations_mutation_id_seq", schema);
  if (!OidIsValid(relid) || !OidIsValid(sequence)) return false;
  Relation rel = table_open(relid, RowExclusiveLock);
  TupleDesc desc = RelationGetDescr(rel);
  int source[kMaxColumns];  // the argument of each column; -1 the identity, -2 a dropped column
  const char* const* names = statements::audit_column_names();
  // A statement trigger, a transition table or a rule is what the executor and the rewriter run
  // around a statement: this writer has none to run them around.
  const TriggerDesc* triggers = rel->trigdesc;
  bool fillable = desc->natts <= kMaxColumns && rel->rd_rules == nullptr &&
                  (triggers == nullptr || !(triggers->trig_insert_before_statement || triggers->trig_insert_after_statement ||
                                            triggers->trig_insert_new_table));
  for (int i = 0; fillable && i < desc->natts; ++i) {
    const Form_pg_attribute att = TupleDescAttr(desc, i);
    source[i] = att->attisdropped ? -2 : std::strcmp(NameStr(att->attname), "mutation_id") == 0 ? -1 : kAuditColumns;
    for (int a = 0; source[i] == kAuditColumns && a < kAuditColumns; ++a) {
      if (std::strcmp(NameStr(att->attname), names[a]) == 0) source[i] = a;
    }
    fillable = source[i] != kAuditColumns;
  }
  if (!fillable) {
    table_close(rel, NoLock);
    return false;
  }
  EState* estate = CreateExecutorState();
  RangeTblEntry* rte = makeNode(RangeTblEntry);
  rte->rtekind = RTE_RELATION;
  rte->relid = relid;
  rte->relkind = rel->rd_rel->relkind;
  rte->rellockmode = RowExclusiveLock;
  ExecInitRangeTable(estate, list_make1(rte));
  ResultRelInfo* result = makeNode(ResultRelInfo);
  InitResultRelInfo(result, rel, 1, nullptr, 0);
  estate->es_opened_result_relations = lappend(estate->es_opened_result_relations, result);
  estate->es_output_cid = GetCurrentCommandId(true);
  AfterTriggerBeginQuery();
  TupleTableSlot* slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
  ExecClearTuple(slot);
  for (int i = 0; i < desc->natts; ++i) {
    slot->tts_isnull[i] = true;
    slot->tts_values[i] = 0;
    if (source[i] == -1) {
      slot->tts_values[i] = Int64GetDatum(nextval_internal(sequence, false));
      slot->tts_isnull[i] = false;
    } else if (source[i] >= 0 && args->nulls[source[i]] != 'n') {
      slot->tts_values[i] = args->values[source[i]];
      slot->tts_isnull[i] = false;
    }
  }
  ExecStoreVirtualTuple(slot);
  ExecOpenIndices(result, false);  // closed by ExecCloseResultRelations
  ExecSimpleRelationInsert(result, estate, slot);
  AfterTriggerEndQuery(estate);
  ExecResetTupleTable(estate->es_tupleTable, false);
  ExecCloseResultRelations(estate);
  ExecCloseRangeTableRelations(estate);
  FreeExecutorState(estate);
  table_close(rel, NoLock);
  return true;
}

bool may_insert_directly() {
  return !citus::distributed() && !XactReadOnly && !IsInParallelMode() && pg::call(superuser);
}

// Inside an open SPI connection (the kept plan's way needs one).
void write_row(const Args& args, const statements::Tables* shards) {
  if (shards == nullptr && may_insert_directly() && pg::call(insert_directly_unsafe, &args)) return;
  KeptPlan& plan = shards == nullptr ? insert_audit : insert_audit_on_shard.of(*shards);
  (void)execute(plan, args, 0, SPI_OK_INSERT, "could not append the audit row");
}

// idem._audit(...): called by the PL/pgSQL paths, as the owner; its arguments are the columns.
Datum audit(FunctionCallInfo fcinfo) {
  Args row;
  for (int i = 0; i < kAuditColumns; ++i) row.add(arg_value(fcinfo, i));
  spi_connect();
  write_row(row, nullptr);
  spi_finish();
  PG_RETURN_VOID();
}

}  // namespace

void append_audit(const AuditRow& row, const statements::Tables* shards) {
  Args args;
#define AUDIT_COLUMN(name, type) args.add(row.name);
#include "core/statements/audit_columns.def"
#undef AUDIT_COLUMN
  write_row(args, shards);
}

}  // namespace idem::hot

IDEM_SQL_FUNCTION(idem_audit, idem::hot::audit)
