// HTTP pieces of the client that need nlohmann-json: problem+json bodies and the stored form of
// response headers. Internal; the public face is problem_response() in idem/client.hpp.
#pragma once

#include <string>
#include <vector>

#include "idem/types.hpp"

namespace idem::http {

// Headers as complete() stores them: {"@ordered": [["Name","value"], ...]}. A JSON object keeps
// neither order nor duplicates (jsonb sorts members and merges names); "@" is not a token
// character (RFC 9110), so no header name can collide with the member. Throws InvalidArgument
// for a name that is not a token or a value with CR, LF or NUL, or that is not UTF-8.
std::string encode_headers(const std::vector<Header>& headers);
// The inverse; also reads an object written by SQL (resolve_stuck, a service calling complete
// itself): each member a header, in the stored order, an array value as repeated headers.
std::vector<Header> decode_headers(const std::string& json);

// The problem for acquire's refusals and the client's own checks.
Response in_progress(const ClientOptions& options, long retry_after_seconds);
// differs: the JSON pointers of the body's members that differ from the key's first request
// (empty: unknown); named in the problem, never their values.
Response mismatch(const ClientOptions& options, const std::vector<std::string>& differs = {});
// 422 ERR_IDEMPOTENCY_KEY_REUSED: the tenant's key was first used by another caller or on
// another route; `differs` names which ("caller", "resource"), not their values.
Response key_reused(const ClientOptions& options, const std::vector<std::string>& differs);

}  // namespace idem::http
