// jsonb straight to its fingerprint: the jsonb container walked in place, each value fed to the
// one-pass canonical writer (core/json/canonical_sink.hpp) that the text path uses, no Event array
// and no json::Value tree. Same bytes, hash and refusals as the tree path (jsonb_events.hpp's
// collect + build, then fingerprint(Value)).
#pragma once

#include <string>
#include <vector>

#include "core/fingerprint.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::jsonb {

// `doc` detoasted. Throws idem::Error for a refusal, pg::PgError for a PostgreSQL error (a cancel
// seen by the interrupt poll, numeric_out on a special value): PostgreSQL is called only through
// pg::guarded, so nothing longjmps over the C++ frames.
Fingerprint fingerprint(const Jsonb* doc, const std::vector<std::string>& exclude);

// The member digests of `doc`'s canonical form (core/json/member_digests.hpp).
std::string member_digests(const Jsonb* doc, const std::vector<std::string>& exclude, const hash::Digest& salt);

}  // namespace idem::jsonb
