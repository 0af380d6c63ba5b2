// Comparing responses the way the crash loop judges them: a replay is the first answer's status,
// headers and body bytes, plus exactly the two replay headers at the end.
#pragma once

#include <string>

#include "idem/client.hpp"

namespace crash {

// Removes the trailing `X-Cache-Lookup: IDEMPOTENT-HIT`, `Idempotent-Replayed: true` pair;
// true when it was there.
bool strip_replay_headers(idem::Response& response);
bool same_response(const idem::Response& a, const idem::Response& b);
// Status, headers and the body with non-printable bytes escaped, for violation messages.
std::string describe(const idem::Response& response);
bool is_in_progress(const idem::Response& response);
bool is_mismatch(const idem::Response& response);

}  // namespace crash
