// The shared library's entry points: the module magic and _PG_init.
#include "extension/gucs.hpp"
#include "extension/store_functions.hpp"
#include "extension/pg/postgres.hpp"

extern "C" {
PG_MODULE_MAGIC;

void _PG_init(void);
}

// Runs once per backend when the library is first loaded (by CREATE EXTENSION or any call).
// Nothing here needs shared memory, so shared_preload_libraries is not required.
void _PG_init(void) {
  idem::gucs::define();
  RegisterXactCallback(idem::check_durability_at_commit, nullptr);
}
