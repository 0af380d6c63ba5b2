// The Idempotency-Key request header as the IETF draft defines it (draft-ietf-httpapi-
// idempotency-key-header: an RFC 8941 Structured Field Item whose value is a String), read once
// here for every service, so that `"K"` and `K` are one key and a merged list is never a key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "idem/client.hpp"

namespace idem {

struct KeyHeader {
  std::optional<std::string> key;  // the key (a String's characters, escapes undone); nullopt: absent or refused
  std::string error;               // why the header was refused; empty when it was not
  bool refused() const noexcept { return !error.empty(); }
};

// One field line's value. Accepted: a String, `"K"` (escapes `\"` and `\\` only), and, as the same
// key, the bare form `K`: RFC 8941 token characters (tchar, ':' and '/'), starting with a letter, a
// digit or '*' (a digit too, unlike an sf-token, so that a bare UUID is a key). Leading and trailing
// SP/HTAB (HTTP's OWS) are ignored; an empty value is the empty key (the key check calls it missing).
// Refused, with the reason: a list (`"a", "b"`), parameters (`"K";p=1`), a bad escape, a byte
// outside printable ASCII, an unterminated String, and the other Structured Field types.
// The key's length and alphabet are checked later, by the client (core/keys/key_validation.hpp).
KeyHeader parse_key_header(std::string_view field_value);

// Every Idempotency-Key line of a request, in order: none is an absent key; two or more are
// refused, even when equal (several lines of a field are one list, RFC 9110 section 5.3).
KeyHeader parse_key_header(const std::vector<std::string>& field_lines);

// The answer to a refused header: 400 ERR_IDEMPOTENCY_KEY_INVALID, the reason as `detail`.
Response key_header_problem(const KeyHeader& header, const ClientOptions& options = {});

}  // namespace idem
