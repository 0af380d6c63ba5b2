// Fingerprints are defined over UTF-8 bytes; a client computes them over UTF-8 too. In another
// database encoding the jsonb path would hash other bytes than the text path and the client.
#pragma once

#include "core/error.hpp"
#include "extension/pg/postgres.hpp"

namespace idem {

// GetDatabaseEncoding only reads a global: it cannot elog.
inline void require_utf8_database() {
  if (GetDatabaseEncoding() == PG_UTF8) return;
  throw Error(ErrorCode::EncodingUnsupported,
              std::string("database encoding is ") + GetDatabaseEncodingName() + ", not UTF8",
              "Create the database WITH ENCODING 'UTF8' (TEMPLATE template0) and install pg_idempotency there.");
}

}  // namespace idem
