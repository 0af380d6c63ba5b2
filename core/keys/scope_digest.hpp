// The stored identity of an idempotency record: a digest of (tenant, caller, resource, key).
#pragma once

#include <string_view>

#include "core/hash/sha256.hpp"

namespace idem::keys {

// SHA-256 over a domain tag and the four parts, each prefixed by its length as 4 big-endian bytes.
// Length prefixes make the encoding injective ("a#b"+"c" never meets "a"+"b#c"); the tag keeps
// these digests apart from any other SHA-256 the system computes. The tenant is kept in clear
// beside the digest (it leads every primary key), and is hashed too so a digest names one tenant.
hash::Digest scope_digest(std::string_view tenant, std::string_view caller, std::string_view resource,
                          std::string_view key);

}  // namespace idem::keys
