// The tenant binding check of the hot path (docs/security.md). Without any binding nobody is
// bound; whether there is one is cached per backend (extension/binding_cache.hpp). When there are
// bindings, idem._require_tenant decides and names the refusal (ERR_TENANT_FORBIDDEN), so
// there is one rule and one message.
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem::hot {

// C++ frames may be live (each PostgreSQL call is guarded), with or without an open SPI
// connection; raises ERR_TENANT_FORBIDDEN (as a pg::PgError).
void require_tenant(Datum tenant_text);

}  // namespace idem::hot
