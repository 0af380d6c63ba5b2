// The one place PostgreSQL's C headers enter C++. Everything in extension/ includes this instead
// of a server header, so the extern "C" block and the reasons for each header live together.
#pragma once

extern "C" {
#include "postgres.h"  // Datum, palloc, ereport: the base of every other header

#include "access/xact.h"          // RegisterXactCallback: the durability check at commit
#include "catalog/namespace.h"    // get_namespace_oid / get_relname_relid for the durability check
#include "catalog/pg_class.h"     // RELPERSISTENCE_PERMANENT
#include "catalog/partition.h"    // get_partition_ancestors: a partition is guarded by its table's registration
#include "catalog/pg_type.h"      // JSONBOID, TEXTOID for SPI arguments
#include "commands/trigger.h"     // TriggerData: the forward-only status trigger
#include "catalog/pg_trigger.h"   // TRIGGER_FOR_*: a guard and its log trigger find each other
#include "executor/spi.h"         // SPI: load the machine tables, log transitions
#include "executor/executor.h"    // ExecutorStart_hook: a statement on idem.keys writes the pending records first
#include "access/detoast.h"       // toast_raw_datum_size: a payload's size before reading it
#include "access/genam.h"         // systable_beginscan: read idem.retired_keys under the latest snapshot
#include "access/htup_details.h"  // heap_getattr
#include "access/table.h"         // table_open / table_close
#include "catalog/pg_collation.h" // C_COLLATION_OID: tenant ids compare bytewise
#include "datatype/timestamp.h"   // Interval and USECS_PER_DAY for elapsed-time leases and TTLs
#include "fmgr.h"                 // PG_FUNCTION_INFO_V1, FunctionCallInfo
#include "funcapi.h"              // get_call_result_type, HeapTupleGetDatum: acquire's composite result
#include "mb/pg_wchar.h"          // GetDatabaseEncoding: fingerprints need a UTF-8 database
#include "miscadmin.h"            // CHECK_FOR_INTERRUPTS, MyDatabaseId
#include "storage/lock.h"         // LockRelease: give back a key's advisory lock after a refusal
#include "storage/lmgr.h"         // LockRelationOid: a pending record holds the lock its INSERT would
#include "storage/proc.h"         // MyProc->lxid: the transaction an outbox's noted groups belong to
#include "common/hashfn.h"        // hash_bytes_extended: an outbox group's lock tag
#include "commands/sequence.h"    // nextval_internal: a transaction's outbox id
#include "catalog/pg_namespace.h" // Form_pg_namespace: the extension owner runs the sequencing
#include "utils/array.h"          // deconstruct_array for the text[] of excluded pointers
#include "utils/acl.h"            // pg_proc_aclcheck: a guard runs only if its caller may execute it
#include "utils/builtins.h"       // text_to_cstring, cstring_to_text_with_len
#include "utils/datum.h"          // datumCopy: a record's fields outlive the buffer they were read from
#include "utils/syscache.h"       // the guard's pg_proc row
#include "catalog/pg_proc.h"      // Form_pg_proc
#include "utils/fmgroids.h"       // F_TEXTEQ, F_BYTEAEQ for scan keys
#include "utils/guc.h"            // DefineCustom*Variable, GetConfigOption
#include "utils/inval.h"          // relcache callbacks: drop cached machines when their rows change
#include "utils/jsonb.h"          // JsonbIterator: walk jsonb without printing it as text
#include "utils/lsyscache.h"      // get_rel_persistence
#include "utils/memutils.h"       // MaxAllocSize: the largest value a result may be
#include "utils/numeric.h"        // numeric_out for jsonb numbers
#include "utils/rel.h"            // RelationGetDescr
#include "utils/snapmgr.h"        // GetLatestSnapshot
#include "utils/timestamp.h"      // Interval datums
#include "nodes/nodeFuncs.h"      // query_tree_walker: the tenant-call guard reads a query before Citus plans it
#include "optimizer/planner.h"    // planner_hook, standard_planner
#include "optimizer/optimizer.h"  // eval_const_expressions: a tenant as the planner will fold it
}
