// The statements the client prepares on each connection: their names, their SQL (with the
// tenant first in Citus mode, docs/citus.md), and the columns of acquire's answer.
#pragma once

#include <string>
#include <vector>

#include "idem/types.hpp"
#include "pg_session.hpp"

namespace idem::statements {

constexpr const char* kAcquire = "idem_client_acquire";
constexpr const char* kAcquireRouteScoped = "idem_client_acquire_route_scoped";
constexpr const char* kComplete = "idem_client_complete";
constexpr const char* kEmit = "idem_client_emit";
constexpr const char* kCheckpoint = "idem_client_checkpoint";
constexpr const char* kRelease = "idem_client_release";

extern const std::vector<pg::Statement> kStatements;
// ClientOptions::citus: the same statements with the tenant first (the parameters gain it as $1).
extern const std::vector<pg::Statement> kCitusStatements;

// The parameters of complete, checkpoint or release: with the tenant first on Citus.
std::vector<SqlValue> tenant_first(bool citus, const std::string& tenant, std::vector<SqlValue> params);

// Columns of kAcquire.
enum AcquireColumn {
  kOutcome, kHandle, kToken, kRecoveryPoint, kRecoveryData, kStatus, kHeaders, kBody, kRetryAfter, kHandlerKey,
  kKeyReuseDiffers
};

inline const char* acquire(bool route_scoped) { return route_scoped ? kAcquireRouteScoped : kAcquire; }

}  // namespace idem::statements
