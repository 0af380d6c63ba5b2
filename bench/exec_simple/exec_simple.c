/*
 * Issue 24 item 3, measured and not kept: the audit row written the way PostgreSQL's logical
 * replication apply worker writes a row (execReplication.c's ExecSimpleRelationInsert on an
 * EState set up by hand: BEFORE ROW triggers, constraints and index maintenance, no planner and
 * no plan's executor start-up) beside the extension's own kept SPI plan (idem._audit). A bench
 * module only, loaded by bench/exec_simple.sh into its own database: it is not part of the
 * extension, and being C, has no C++ frame for an error to unwind through.
 *
 * bench_audit_simple(<idem._audit's 18 arguments>): one audit row, its EState made and freed per
 * call (what a per-call SQL function must do: an EState cannot outlive its statement).
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "commands/sequence.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

PG_MODULE_MAGIC;

/* The audit row's columns, in idem._audit's argument order (core/statements/audit_columns.def). */
static const char *const audit_columns[] = {
	"tenant_id", "scope_digest", "client_key", "caller_id", "resource", "generation", "attempt",
	"mutation_type", "outcome", "handler_called", "order_id", "handler_response", "local_status",
	"error_message", "recovery_point", "retry_count", "attempted_at", "completed_at"};
#define AUDIT_ARGS (sizeof(audit_columns) / sizeof(audit_columns[0]))

PG_FUNCTION_INFO_V1(bench_audit_simple);

Datum
bench_audit_simple(PG_FUNCTION_ARGS)
{
	Oid			nsp = get_namespace_oid("idem", false);
	Oid			relid = get_relname_relid("mutations", nsp);
	Oid			seqid = get_relname_relid("mutations_mutation_id_seq", nsp);
	Relation	rel = table_open(relid, RowExclusiveLock);
	TupleDesc	desc = RelationGetDescr(rel);
	EState	   *estate = CreateExecutorState();
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	TupleTableSlot *slot;
	int			i;
	size_t		a;

	rte->rtekind = RTE_RELATION;
	rte->relid = relid;
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	ExecInitRangeTable(estate, list_make1(rte));
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	estate->es_opened_result_relations = lappend(estate->es_opened_result_relations, rri);
	estate->es_output_cid = GetCurrentCommandId(true);
	AfterTriggerBeginQuery();

	slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	ExecClearTuple(slot);
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		slot->tts_isnull[i] = true;
		slot->tts_values[i] = (Datum) 0;
		if (att->attisdropped)
			continue;
		if (strcmp(NameStr(att->attname), "mutation_id") == 0)
		{
			/* GENERATED ALWAYS AS IDENTITY: the rewriter's default, drawn here. */
			slot->tts_values[i] = Int64GetDatum(nextval_internal(seqid, false));
			slot->tts_isnull[i] = false;
			continue;
		}
		for (a = 0; a < AUDIT_ARGS; a++)
		{
			if (strcmp(NameStr(att->attname), audit_columns[a]) == 0)
			{
				slot->tts_isnull[i] = PG_ARGISNULL(a);
				slot->tts_values[i] = PG_ARGISNULL(a) ? (Datum) 0 : PG_GETARG_DATUM(a);
				break;
			}
		}
	}
	ExecStoreVirtualTuple(slot);

	ExecOpenIndices(rri, false);	/* closed by ExecCloseResultRelations */
	ExecSimpleRelationInsert(rri, estate, slot);

	AfterTriggerEndQuery(estate);
	ExecResetTupleTable(estate->es_tupleTable, false);
	ExecCloseResultRelations(estate);
	ExecCloseRangeTableRelations(estate);
	FreeExecutorState(estate);
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}
