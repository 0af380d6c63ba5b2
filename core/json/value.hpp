// An in-memory JSON document as the fingerprint needs it: strings decoded to UTF-8, numbers kept
// in their original spelling (so exactness can be judged), object members in input order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace idem::json {

enum class Kind : std::uint8_t { Null, False, True, Number, String, Array, Object };

struct Value {
  Kind kind = Kind::Null;
  // String: the decoded UTF-8 text. Number: the JSON spelling as written (e.g. "4.50", "1E30").
  std::string text;
  // Array: the elements. Object: the member values, parallel to `keys`.
  std::vector<Value> items;
  // Object only: the member names, decoded UTF-8, unique.
  std::vector<std::string> keys;
};

// Receives a document as a stream of events and assembles a Value: the extension's jsonb walker
// feeds it. The strict text parser builds the same Value itself (faster), with the same duplicate
// check (detail::check_unique_names), so both paths share one canonicalizer.
// Duplicate member names are refused here (ErrorCode::JsonInvalid), `offset` names the byte
// (0 means unknown, e.g. from a jsonb walk, and is left out of the message). Nesting deeper than
// kMaxDepth (parser.hpp) is refused too, so every consumer of a Value may recurse.
class TreeBuilder {
 public:
  void begin_object();
  void key(std::string name, std::size_t offset = 0);
  void end_object();
  void begin_array();
  void end_array();
  void string(std::string text);
  void number(std::string spelling);
  void boolean(bool value);
  void null();

  // The finished document; valid once every begin_* has its end_*.
  Value finish();

  // RFC 6901 pointer of the place the next value would take, e.g. "/items/3/price" after
  // key("price") inside the fourth element of "items": lets a caller refusing that value say
  // where it is.
  std::string next_pointer() const;

 private:
  void add(Value v);
  Value root_;
  std::vector<Value*> stack_;
  // Byte offsets of the member names of every open object, innermost last (for error messages).
  std::vector<std::size_t> key_offsets_;
  bool has_root_ = false;
};

namespace detail {
// TreeBuilder::end_object's duplicate check, for a parser that builds Values itself: refuses
// (ErrorCode::JsonInvalid) the earliest of the n names that appeared before it, naming the byte
// offsets[i] of its name (0: unknown). Up to 32 names by comparing pairs, above by sorting.
void check_unique_names(const std::string* keys, std::size_t n, const std::size_t* offsets);
// Its refusal of `name`, whose opening quote is at byte `offset` (0: unknown): for the one-pass
// canonicalizer, which runs the same check over names it keeps in one buffer.
[[noreturn]] void throw_duplicate_name(std::string_view name, std::size_t offset);
}  // namespace detail

}  // namespace idem::json
