// The hot path's tenant check: no SQL while no binding exists, idem._require_tenant otherwise.
#include "extension/hot_path/tenant_check.hpp"

#include "extension/binding_cache.hpp"
#include "extension/hot_path/kept_plan.hpp"

namespace idem::hot {
namespace {

KeptPlan require_bound_tenant{"SELECT idem._require_tenant($1)", 1, {TEXTOID}, nullptr};

}  // namespace

void require_tenant(Datum tenant_text) {
  if (!bindings::may_be_bound(bindings::Table::Tenant)) return;  // the common case: no SPI at all
  Args tenant;
  tenant.add(tenant_text);
  spi_connect();
  (void)execute(require_bound_tenant, tenant, 1, SPI_OK_SELECT, "could not check the tenant binding");
  spi_finish();
}

}  // namespace idem::hot
