// Hostile strings and JSON documents: the edge cases a SQL caller can send through text and jsonb
// arguments (huge, empty, control characters, invalid UTF-8, deep nesting, numbers beyond a double,
// lone surrogates, duplicate members, ...), and plausible ones that pass validation.
#pragma once

#include <string>

#include "tests/fuzz_sql/pools.hpp"

namespace idem::fuzz_sql {

// A string of any kind; a few contain bytes that are not UTF-8 (the server refuses those, 22021).
std::string hostile_text(Rng& rng);
// A JSON document: plausible ones (a cart and an amount from a small set, so keys collide across
// sessions) when `plausible`, else anything from valid to broken.
std::string json_document(Rng& rng, bool plausible);
// An idempotency key: one of a small shared set (replays, mismatches, contention), a random valid
// one, or one just outside the rules.
std::string idempotency_key(Rng& rng);
// A handle that is almost right: another tenant's prefix, a changed digit, cut short, ...
std::string mangled_handle(Rng& rng, const std::string& handle);
// `text` as a SQL string literal (standard_conforming_strings: only ' is special).
std::string quote_literal(const std::string& text);
std::string random_hex(Rng& rng, std::size_t bytes);

}  // namespace idem::fuzz_sql
