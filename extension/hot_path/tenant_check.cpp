// The hot path's tenant check: no SQL while no binding exists, idem._require_tenant otherwise.
#include "extension/hot_path/tenant_check.hpp"

#include "extension/binding_cache.hpp"
#include "extension/hot_path/kept_plan.hpp"

namespace idem::hot {
namespace {

KeptPlan require_bound_tenant{"SELECT idem._require_tenant($1)", 1, {TEXTOID}, nullptr};

}  // namespace

void require_tenant(Datum tenant_text) {
  if (!bindings::any(bindings::Table::Tenant)) return;  // the common case: no SPI at all
  Args tenant;
  tenant.add(tenant_text);
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  if (execute(require_bound_tenant, tenant, 1) != SPI_OK_SELECT) elog(ERROR, "pg_idempotency: could not check the tenant binding");
  SPI_finish();
}

}  // namespace idem::hot

