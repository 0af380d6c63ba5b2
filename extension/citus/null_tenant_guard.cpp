// The planner hook of null_tenant_guard.hpp. The hook and its walker are plain C: an error they
// raise unwinds only PostgreSQL frames. The one C++ call (is this database on Citus?) goes
// through the boundary.
#include "extension/citus/null_tenant_guard.hpp"

#include "extension/boundary.hpp"
#include "extension/citus/citus_mode.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::citus {
namespace {

planner_hook_type previous_planner = nullptr;

struct Walk {
  Oid idem_namespace;
  ParamListInfo params;
};

// The expression is NULL before the query runs: a NULL constant, or an external parameter bound
// to NULL (an unnamed statement's, planned with its values).
bool null_before_run_unsafe(Node* expr, ParamListInfo params) {
  expr = strip_implicit_coercions(expr);
  if (IsA(expr, Const)) return reinterpret_cast<Const*>(expr)->constisnull;
  if (IsA(expr, Param)) {
    const Param* p = reinterpret_cast<Param*>(expr);
    if (p->paramkind != PARAM_EXTERN || params == nullptr || params->paramFetch != nullptr) return false;
    return p->paramid >= 1 && p->paramid <= params->numParams && params->params[p->paramid - 1].isnull;
  }
  return false;
}

// Whether the function's first parameter is named tenant (every entry point that takes one).
bool first_parameter_is_tenant_unsafe(Oid function) {
  HeapTuple proc = SearchSysCache1(PROCOID, ObjectIdGetDatum(function));
  if (!HeapTupleIsValid(proc)) return false;
  Oid* types = nullptr;
  char** names = nullptr;
  char* modes = nullptr;
  const int n = get_func_arg_info(proc, &types, &names, &modes);
  const bool tenant = n > 0 && names != nullptr && names[0] != nullptr && strcmp(names[0], "tenant") == 0;
  ReleaseSysCache(proc);
  return tenant;
}

// The argument a call passes in position 0, positional or named (tenant => ...), or nullptr.
Node* first_argument_unsafe(List* args) {
  ListCell* cell;
  int position = 0;
  foreach (cell, args) {
    Node* arg = static_cast<Node*>(lfirst(cell));
    if (IsA(arg, NamedArgExpr)) {
      const NamedArgExpr* named = reinterpret_cast<NamedArgExpr*>(arg);
      if (named->argnumber == 0) return reinterpret_cast<Node*>(named->arg);
    } else if (position == 0) {
      return arg;
    }
    ++position;
  }
  return nullptr;
}

// PostgreSQL 15 declares its walkers' callbacks without a prototype, bool (*)(): the cast passes
// through void (*)(void), which -Wcast-function-type allows.
using Walker = bool (*)(Node*, void*);
inline bool (*as_walker(Walker walker))() {
  return reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)(void)>(walker));
}

bool refuse_null_tenant_walker(Node* node, void* context) {
  if (node == nullptr) return false;
  Walk* walk = static_cast<Walk*>(context);
  if (IsA(node, Query)) return query_tree_walker(reinterpret_cast<Query*>(node), as_walker(refuse_null_tenant_walker), context, 0);
  if (IsA(node, FuncExpr)) {
    const FuncExpr* call = reinterpret_cast<FuncExpr*>(node);
    Node* first = first_argument_unsafe(call->args);
    if (first != nullptr && null_before_run_unsafe(first, walk->params) &&
        get_func_namespace(call->funcid) == walk->idem_namespace && first_parameter_is_tenant_unsafe(call->funcid)) {
      ereport(ERROR, (errcode(MAKE_SQLSTATE('I', 'K', '0', '1', '2')),  // ERR_ARGUMENT_INVALID (core/error.cpp)
                      errmsg("ERR_ARGUMENT_INVALID: tenant must not be NULL (%s)", get_func_name(call->funcid)),
                      errhint("Pass the tenant the call acts for.")));
    }
  }
  return expression_tree_walker(node, as_walker(refuse_null_tenant_walker), context);
}

void refuse_null_tenant_unsafe(Query* parse, ParamListInfo params) {
  Walk walk{get_namespace_oid("idem", true), params};
  if (walk.idem_namespace == InvalidOid) return;
  (void)refuse_null_tenant_walker(reinterpret_cast<Node*>(parse), &walk);
}

PlannedStmt* plan_refusing_null_tenants(Query* parse, const char* query_string, int cursor_options,
                                        ParamListInfo params) {
  if (Guard([] { return distributed(); })) refuse_null_tenant_unsafe(parse, params);
  return previous_planner != nullptr ? previous_planner(parse, query_string, cursor_options, params)
                                     : standard_planner(parse, query_string, cursor_options, params);
}

}  // namespace

void install_null_tenant_guard() {
  previous_planner = planner_hook;
  planner_hook = plan_refusing_null_tenants;
}

}  // namespace idem::citus
