// Bearer tokens for the demo: "<base64url(tenant:caller)>.<hex HMAC-SHA256(secret, payload)>".
// Tenant and caller come only from a token the service signed, never from the request body, so
// one tenant cannot name another's keys (as the refund contract's JWT session context does).
#pragma once

#include <optional>
#include <string>

namespace checkout {

struct Principal {
  std::string tenant;
  std::string caller;
};

// A token for tenant/caller signed with secret (the demo's driver and `--mint-token` use it).
// The tenant may not contain ':' (the token splits at the first one): std::invalid_argument.
std::string mint_token(const std::string& secret, const std::string& tenant, const std::string& caller);

// The principal of an `Authorization: Bearer <token>` header value, or nullopt when the header is
// absent, malformed or its signature does not verify (compared in constant time).
std::optional<Principal> verify_bearer(const std::string& secret, const std::string& authorization);

}  // namespace checkout
