// Walks jsonb with JsonbIterator. jsonb keeps numbers as numeric, so their spelling reaches the
// exactness check with every digit (but "1E2" arrives as "100": jsonb does not keep spelling).
#include "extension/jsonb_events.hpp"

#include <string>

namespace idem::jsonb {

Events collect(Jsonb* doc) {
  std::size_t capacity = 64;
  Events out{static_cast<Event*>(palloc(capacity * sizeof(Event))), 0};
  JsonbIterator* it = JsonbIteratorInit(&doc->root);
  JsonbValue v;
  JsonbIteratorToken token;
  bool raw_scalar = false;
  unsigned tokens = 0;
  while ((token = JsonbIteratorNext(&it, &v, false)) != WJB_DONE) {
    // Plain data only in this frame: a cancel or statement_timeout may longjmp from here.
    if ((++tokens & 4095) == 0) CHECK_FOR_INTERRUPTS();
    Event e{EventKind::Null, 0, nullptr};
    switch (token) {
      case WJB_BEGIN_OBJECT: e.kind = EventKind::BeginObject; break;
      case WJB_END_OBJECT: e.kind = EventKind::EndObject; break;
      case WJB_BEGIN_ARRAY:
        // A top-level scalar is stored as a one-element "raw scalar" array: unwrap it.
        if (v.val.array.rawScalar) { raw_scalar = true; continue; }
        e.kind = EventKind::BeginArray;
        break;
      case WJB_END_ARRAY:
        if (raw_scalar) continue;
        e.kind = EventKind::EndArray;
        break;
      case WJB_KEY:
        e = {EventKind::Key, v.val.string.len, v.val.string.val};
        break;
      case WJB_VALUE:
      case WJB_ELEM:
        switch (v.type) {
          case jbvString: e = {EventKind::String, v.val.string.len, v.val.string.val}; break;
          case jbvNumeric: {
            char* digits = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
            e = {EventKind::Number, static_cast<int>(strlen(digits)), digits};
            break;
          }
          case jbvBool: e.kind = v.val.boolean ? EventKind::True : EventKind::False; break;
          case jbvNull: e.kind = EventKind::Null; break;
          default: elog(ERROR, "pg_idempotency: unexpected jsonb value type %d", static_cast<int>(v.type));
        }
        break;
      default: elog(ERROR, "pg_idempotency: unexpected jsonb iterator token %d", static_cast<int>(token));
    }
    if (out.count == capacity) {
      capacity *= 2;
      out.items = static_cast<Event*>(repalloc(out.items, capacity * sizeof(Event)));
    }
    out.items[out.count++] = e;
  }
  return out;
}

json::Value build(const Events& events) {
  json::TreeBuilder builder;
  for (std::size_t i = 0; i < events.count; ++i) {
    const Event& e = events.items[i];
    switch (e.kind) {
      case EventKind::BeginObject: builder.begin_object(); break;
      case EventKind::EndObject: builder.end_object(); break;
      case EventKind::BeginArray: builder.begin_array(); break;
      case EventKind::EndArray: builder.end_array(); break;
      case EventKind::Key: builder.key(std::string(e.text, e.length)); break;
      case EventKind::String: builder.string(std::string(e.text, e.length)); break;
      case EventKind::Number: builder.number(std::string(e.text, e.length)); break;
      case EventKind::True: builder.boolean(true); break;
      case EventKind::False: builder.boolean(false); break;
      case EventKind::Null: builder.null(); break;
    }
  }
  return builder.finish();
}

}  // namespace idem::jsonb
