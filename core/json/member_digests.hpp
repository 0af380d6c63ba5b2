// Which members of a payload differ from the one a key first carried, without keeping either:
// a small Merkle tree over the RFC 8785 form. Each value down to kMemberDepth gets a digest
// (a leaf: its canonical bytes; a container above the depth: its children's digests), salted per
// record so equal values in two records do not share digests, and only the JSON pointers and
// truncated digests are kept. Comparing two such sets names the pointers that differ, never a
// value (docs/client.md "422: which fields differ").
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/hash/sha256.hpp"

namespace idem::json {

inline constexpr int kMemberDepth = 2;             // "/items/2" at the deepest
inline constexpr std::size_t kMaxMemberDigests = 128;  // levels that do not fit are left out whole
inline constexpr std::size_t kMaxMemberDigestBytes = 8192;  // and at most this many bytes
inline constexpr unsigned char kMemberDigestsFormat = 1;

// The record's salt, from its scope digest: the client and the server derive the same one, and
// two records never share it.
hash::Digest member_salt(const hash::Digest& scope_digest);

// The digests of `canonical` (RFC 8785 bytes: what the fingerprint hashed), encoded compactly:
// format byte, the depth kept, the root's shape, then each kept value in document order: its
// name if its parent is an object (an array's indexes are implied), 4 digest bytes, and its shape
// when it lies above the depth kept (shape: a varint, members << 1 | is_object; 0 a leaf). A
// level is kept only whole, and only while all levels so far fit in kMaxMemberDigests and
// kMaxMemberDigestBytes.
std::string member_digests(std::string_view canonical, const hash::Digest& salt);

// The pointers whose values differ between two encodings of one record's salt (added, removed or
// changed), the deepest only ("/items/2", not also "/items"), in the first one's order then the
// second's. Compared down to the shallower depth of the two; {""} (the root's pointer) when one
// root is an object and the other an array. nullopt when either is not an encoding of this format.
std::optional<std::vector<std::string>> differing_members(std::string_view first, std::string_view second);

// Whether `bytes` is an encoding member_digests could have made (format, bounds, entries whole,
// names well-formed UTF-8 in RFC 8785's order): what acquire accepts from a caller.
bool valid_member_digests(std::string_view bytes);

}  // namespace idem::json
