// jsonb -> core's json::Value without printing jsonb as text first (that print is most of the
// cost of sha256(jsonb::text)). Two phases keep PostgreSQL calls out of frames with destructors.
#pragma once

#include <cstddef>

#include "core/json/value.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::jsonb {

enum class EventKind : unsigned char { BeginObject, EndObject, BeginArray, EndArray, Key, String, Number, True, False, Null };

struct Event {
  EventKind kind;
  int length;        // bytes of text, for Key/String/Number
  const char* text;  // points into the jsonb datum (strings) or palloc'd memory (numbers)
};

struct Events {
  Event* items;  // palloc'd in the current memory context
  std::size_t count;
};

// Phase 1, PostgreSQL only: walks the container; may elog(ERROR). Holds only plain data.
Events collect(Jsonb* doc);

// Phase 2, C++ only: builds the document. Throws idem::Error, never calls PostgreSQL.
json::Value build(const Events& events);

}  // namespace idem::jsonb
