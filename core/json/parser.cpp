// parse_strict: the hand-written single-pass strict parser (parser_impl.hpp) feeding a TreeSink,
// which builds the Value itself. Its refusals name the same byte offsets, in the same words, as
// the nlohmann-json parser it replaced (kept as the reference it is tested against:
// tests/reference/).
#include "core/json/parser.hpp"

#include <iterator>
#include <string>
#include <vector>

#include "core/json/parser_impl.hpp"
#include "core/json/pointer.hpp"

namespace idem::json {
namespace {

// Builds the Value: finished values of the open containers wait on a stack, innermost last, and
// a closing bracket moves its elements into one allocation of the exact size.
class TreeSink {
 public:
  TreeSink() {
    values_.reserve(64);
    keys_.reserve(32);
    key_offsets_.reserve(32);
  }

  static constexpr bool kCanonicalStrings = false;
  std::string& begin_string() { return push(Kind::String).text; }
  void end_string() {}
  // (pointer, length): the iterator-pair overloads go through the slower _M_replace
  void number(const char* spelling, std::size_t length) {
    push(Kind::Number).text.append(spelling, length);
  }
  void boolean(bool value) { push(value ? Kind::True : Kind::False); }
  void null() { push(Kind::Null); }
  void empty_array() { push(Kind::Array); }
  void empty_object() { push(Kind::Object); }
  void open(bool array) { frames_[depth_++] = Frame{array, values_.size(), keys_.size()}; }
  std::string& begin_key(std::size_t offset) {
    key_offsets_.push_back(offset);
    return keys_.emplace_back();
  }
  void end_key(std::size_t) {}
  void close_array();
  void close_object();
  std::string next_pointer() const;
  Value finish() { return std::move(values_.front()); }

 private:
  // An open array or object: its finished elements (members) are values_[items..], its member
  // names keys_[keys..], until it closes and takes them.
  struct Frame {
    bool array;
    std::size_t items;
    std::size_t keys;
  };

  Value& push(Kind kind) {
    Value& v = values_.emplace_back();
    v.kind = kind;
    return v;
  }

  // Finished values of the open containers, innermost last, then the document itself; member
  // names of the open objects and the byte offsets of their opening quotes.
  std::vector<Value> values_;
  std::vector<std::string> keys_;
  std::vector<std::size_t> key_offsets_;
  Frame frames_[kMaxDepth];
  std::size_t depth_ = 0;
};

// An array takes its elements off the stack, in one allocation of the exact size.
void TreeSink::close_array() {
  const Frame f = frames_[--depth_];
  Value array;
  array.kind = Kind::Array;
  array.items.assign(std::make_move_iterator(values_.begin() + f.items),
                     std::make_move_iterator(values_.end()));
  values_.resize(f.items);
  values_.push_back(std::move(array));
}

// An object refuses duplicate names (as TreeBuilder does), then takes its members.
void TreeSink::close_object() {
  const Frame f = frames_[--depth_];
  const std::size_t n = keys_.size() - f.keys;
  detail::check_unique_names(keys_.data() + f.keys, n, key_offsets_.data() + f.keys);
  Value object;
  object.kind = Kind::Object;
  object.keys.assign(std::make_move_iterator(keys_.begin() + f.keys),
                     std::make_move_iterator(keys_.end()));
  object.items.assign(std::make_move_iterator(values_.begin() + f.items),
                      std::make_move_iterator(values_.end()));
  keys_.resize(f.keys);
  key_offsets_.resize(f.keys);
  values_.resize(f.items);
  values_.push_back(std::move(object));
}

// RFC 6901 pointer of the place the next value takes (as TreeBuilder::next_pointer).
std::string TreeSink::next_pointer() const {
  std::string pointer;
  for (std::size_t level = 0; level < depth_; ++level) {
    const Frame& f = frames_[level];
    if (f.array) {
      // Finished elements of this array; an open child (deeper level) is not among them yet.
      const std::size_t end = level + 1 < depth_ ? frames_[level + 1].items : values_.size();
      pointer += "/" + std::to_string(end - f.items);
    } else {
      const std::size_t end = level + 1 < depth_ ? frames_[level + 1].keys : keys_.size();
      if (end > f.keys) pointer += "/" + escape_token(keys_[end - 1]);
    }
  }
  return pointer;
}

}  // namespace

Value parse_strict(std::string_view text) {
  TreeSink sink;
  return detail::BasicParser<TreeSink>(text, sink).run();
}

}  // namespace idem::json
