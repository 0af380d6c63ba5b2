// The planner hook of tenant_call_guard.hpp. The hook's checks and its walker are plain C: an
// error they raise unwinds only PostgreSQL frames. The one C++ call (is this database on Citus?)
// goes through the boundary.
#include "extension/citus/tenant_call_guard.hpp"

#include "extension/boundary.hpp"
#include "extension/citus/citus_mode.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::citus {
namespace {

planner_hook_type previous_planner = nullptr;

// PostgreSQL 15 declares its walkers' callbacks without a prototype, bool (*)(): the cast passes
// through void (*)(void), which -Wcast-function-type allows.
using Walker = bool (*)(Node*, void*);
inline bool (*as_walker(Walker walker))() {
  return reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)(void)>(walker));
}

struct Walk {
  Oid idem_namespace;
  ParamListInfo params;
  List* top_level_calls;  // the calls Citus may delegate: the query's own target list and FROM functions
  bool saw_call;
};

// Where a function's parameters named tenant and consumer are, -1 where it has none.
struct TenantParameters {
  int tenant = -1;
  int consumer = -1;
};

TenantParameters tenant_parameters_unsafe(Oid function) {
  TenantParameters at;
  HeapTuple proc = SearchSysCache1(PROCOID, ObjectIdGetDatum(function));
  if (!HeapTupleIsValid(proc)) return at;
  Oid* types = nullptr;
  char** names = nullptr;
  char* modes = nullptr;
  const int n = get_func_arg_info(proc, &types, &names, &modes);
  // Positions among the arguments a call passes: output columns (OUT, TABLE) are not among them.
  int input = 0;
  for (int i = 0; i < n; ++i) {
    if (modes != nullptr && (modes[i] == PROARGMODE_OUT || modes[i] == PROARGMODE_TABLE)) continue;
    if (names != nullptr && names[i] != nullptr && strcmp(names[i], "tenant") == 0) at.tenant = input;
    if (names != nullptr && names[i] != nullptr && strcmp(names[i], "consumer") == 0) at.consumer = input;
    ++input;
  }
  ReleaseSysCache(proc);
  return at;
}

// The entry points idem.citus_distribute registers to run on the tenant's node (its list in
// sql/udfs/citus_distribute/latest.sql; the consumer's
// four without force_delegation, yet Citus 13.2 crashed the coordinator on consume_once in a
// WHERE clause all the same: a larger query is refused for them too).
bool delegated_name(const char* name) {
  static const char* const kDelegated[] = {
      "acquire",       "complete",     "checkpoint", "release", "emit", "resolve_stuck",
      "retry_stuck",   "purge_expired", "claim_tenant", "ack",  "nack", "consume_once"};
  for (const char* d : kDelegated) {
    if (strcmp(name, d) == 0) return true;
  }
  return false;
}

// A call of one of them, in its form that takes a tenant: where its tenant (and consumer) are.
TenantParameters tenant_call_unsafe(Node* node, const Walk* walk) {
  if (node == nullptr || !IsA(node, FuncExpr)) return {};
  const Oid function = reinterpret_cast<FuncExpr*>(node)->funcid;
  if (get_func_namespace(function) != walk->idem_namespace) return {};
  char* name = get_func_name(function);
  const bool delegated = name != nullptr && delegated_name(name);
  if (name != nullptr) pfree(name);
  return delegated ? tenant_parameters_unsafe(function) : TenantParameters{};
}

bool is_tenant_call_unsafe(Node* node, const Walk* walk) { return tenant_call_unsafe(node, walk).tenant >= 0; }

// The argument a call passes for the parameter in position, positional or named (tenant => ...),
// or nullptr (a default).
Node* argument_unsafe(List* args, int position) {
  ListCell* cell;
  int at = 0;
  foreach (cell, args) {
    Node* arg = static_cast<Node*>(lfirst(cell));
    if (IsA(arg, NamedArgExpr)) {
      const NamedArgExpr* named = reinterpret_cast<NamedArgExpr*>(arg);
      if (named->argnumber == position) return reinterpret_cast<Node*>(named->arg);
    } else if (at == position) {
      return arg;
    }
    ++at;
  }
  return nullptr;
}

// The tenant as the planner will see it: folded with the statement's bound parameters (a PL/pgSQL
// variable, an unnamed statement's value), casts and immutable functions evaluated, SQL functions
// inlined. A Const, or whatever could not be folded.
Node* folded_unsafe(Node* expr, ParamListInfo params) {
  PlannerGlobal glob;
  memset(&glob, 0, sizeof glob);
  glob.type = T_PlannerGlobal;
  glob.boundParams = params;
  PlannerInfo root;
  memset(&root, 0, sizeof root);
  root.type = T_PlannerInfo;
  root.glob = &glob;
  return strip_implicit_coercions(eval_const_expressions(&root, static_cast<Node*>(copyObjectImpl(expr))));
}

// Under SET ROLE, the login role's binding, checked here (idem._require_tenant and
// idem._require_consumer read session_user, which on the tenant's node is the role set), as the
// extension's owner: the internal function is not the caller's to execute.
void require_session_binding_unsafe(const char* check, Const* bound, Oid idem_namespace) {
  if (GetUserId() == GetSessionUserId() || bound->consttype != TEXTOID || bound->constisnull) return;
  HeapTuple ns = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(idem_namespace));
  if (!HeapTupleIsValid(ns)) elog(ERROR, "pg_idempotency: schema idem is missing");
  const Oid owner = reinterpret_cast<Form_pg_namespace>(GETSTRUCT(ns))->nspowner;
  ReleaseSysCache(ns);
  Oid saved_user = InvalidOid;
  int saved_context = 0;
  GetUserIdAndSecContext(&saved_user, &saved_context);
  // An error below aborts the transaction, which restores the user itself.
  SetUserIdAndSecContext(owner, saved_context | SECURITY_LOCAL_USERID_CHANGE);
  Datum args[1] = {bound->constvalue};
  Oid types[1] = {TEXTOID};
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  if (SPI_execute_with_args(check, 1, types, args, nullptr, true, 1) != SPI_OK_SELECT) {
    elog(ERROR, "pg_idempotency: could not check the tenant binding");
  }
  SPI_finish();
  SetUserIdAndSecContext(saved_user, saved_context);
}

void check_call_unsafe(FuncExpr* call, const TenantParameters& at, Walk* walk) {
  walk->saw_call = true;
  Node* argument = argument_unsafe(call->args, at.tenant);
  Node* tenant = argument == nullptr ? nullptr : folded_unsafe(argument, walk->params);
  if (tenant != nullptr && IsA(tenant, Const) && reinterpret_cast<Const*>(tenant)->constisnull) {
    ereport(ERROR, (errcode(MAKE_SQLSTATE('I', 'K', '0', '1', '2')),  // ERR_ARGUMENT_INVALID (core/error.cpp)
                    errmsg("ERR_ARGUMENT_INVALID: tenant must not be NULL (%s)", get_func_name(call->funcid)),
                    errhint("Pass the tenant the call acts for.")));
  }
  if (!list_member_ptr(walk->top_level_calls, call)) {
    ereport(ERROR, (errcode(MAKE_SQLSTATE('I', 'K', '0', '2', '9')),  // ERR_TENANT_NOT_LOCAL (core/error.cpp)
                    errmsg("ERR_TENANT_NOT_LOCAL: %s inside a larger query would run on this node, not on its tenant's",
                           get_func_name(call->funcid)),
                    errhint("On Citus, call it alone: SELECT idem.%s(...) or SELECT ... FROM idem.%s(...) (docs/citus.md).",
                            get_func_name(call->funcid), get_func_name(call->funcid))));
  }
  // A consumer's calls are checked against its consumer bindings, the others against the tenant's.
  if (at.consumer >= 0) {
    Node* given = argument_unsafe(call->args, at.consumer);
    Node* consumer = given == nullptr ? nullptr : folded_unsafe(given, walk->params);
    if (consumer != nullptr && IsA(consumer, Const)) {
      require_session_binding_unsafe("SELECT idem._require_consumer($1)", reinterpret_cast<Const*>(consumer),
                                     walk->idem_namespace);
    } else if (GetUserId() != GetSessionUserId()) {
      // Not the distribution argument: Citus may send the call to the tenant's node with the
      // consumer still unevaluated, where the binding seen is the role set's.
      ereport(ERROR, (errcode(MAKE_SQLSTATE('I', 'K', '0', '2', '5')),  // ERR_CONSUMER_FORBIDDEN (core/error.cpp)
                      errmsg("ERR_CONSUMER_FORBIDDEN: under SET ROLE, %s needs its consumer as a literal or a bound parameter",
                             get_func_name(call->funcid)),
                      errhint("The login role's consumer binding is checked before the call leaves this node (docs/citus.md).")));
    }
  } else if (tenant != nullptr && IsA(tenant, Const)) {
    require_session_binding_unsafe("SELECT idem._require_tenant($1)", reinterpret_cast<Const*>(tenant),
                                   walk->idem_namespace);
  }
}

bool tenant_call_walker(Node* node, void* context) {
  if (node == nullptr) return false;
  Walk* walk = static_cast<Walk*>(context);
  if (IsA(node, Query)) return query_tree_walker(reinterpret_cast<Query*>(node), as_walker(tenant_call_walker), context, 0);
  const TenantParameters at = tenant_call_unsafe(node, walk);
  if (at.tenant >= 0) check_call_unsafe(reinterpret_cast<FuncExpr*>(node), at, walk);
  return expression_tree_walker(node, as_walker(tenant_call_walker), context);
}

// Returns whether the query calls an entry point that takes a tenant.
bool check_tenant_calls_unsafe(Query* parse, ParamListInfo params) {
  Walk walk{get_namespace_oid("idem", true), params, NIL, false};
  if (walk.idem_namespace == InvalidOid) return false;
  ListCell* cell;
  foreach (cell, parse->targetList) {
    Node* expr = reinterpret_cast<Node*>(lfirst_node(TargetEntry, cell)->expr);
    if (is_tenant_call_unsafe(expr, &walk)) walk.top_level_calls = lappend(walk.top_level_calls, expr);
  }
  foreach (cell, parse->rtable) {
    const RangeTblEntry* rte = lfirst_node(RangeTblEntry, cell);
    if (rte->rtekind != RTE_FUNCTION) continue;
    ListCell* f;
    foreach (f, rte->functions) {
      Node* expr = lfirst_node(RangeTblFunction, f)->funcexpr;
      if (is_tenant_call_unsafe(expr, &walk)) walk.top_level_calls = lappend(walk.top_level_calls, expr);
    }
  }
  (void)tenant_call_walker(reinterpret_cast<Node*>(parse), &walk);
  list_free(walk.top_level_calls);
  return walk.saw_call;
}

PlannedStmt* plan_checking_tenant_calls(Query* parse, const char* query_string, int cursor_options,
                                        ParamListInfo params) {
  const bool calls = Guard([] { return distributed(); }) && check_tenant_calls_unsafe(parse, params);
  PlannedStmt* plan = previous_planner != nullptr ? previous_planner(parse, query_string, cursor_options, params)
                                                  : standard_planner(parse, query_string, cursor_options, params);
  if (calls) plan->dependsOnRole = true;  // a cached plan is made again after SET ROLE, and checked
  return plan;
}

}  // namespace

void install_tenant_call_guard() {
  previous_planner = planner_hook;
  planner_hook = plan_checking_tenant_calls;
}

}  // namespace idem::citus
