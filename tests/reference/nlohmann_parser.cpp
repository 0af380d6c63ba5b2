// The reference parser: nlohmann-json's SAX parser (strict mode, comments off) feeding TreeBuilder,
// plus the byte offsets that our own refusals (duplicate names, depth) and its errors need. This
// was parse_strict until the hand-written parser replaced it (docs/json-parser.md).
#include "tests/reference/nlohmann_parser.hpp"

#include <charconv>
#include <cstring>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.hpp"
#include "core/json/parser.hpp"

namespace idem::json::reference {
namespace {

using nlohmann::json;

const char kHint[] =
    "send one JSON value in UTF-8 (RFC 8259, I-JSON): no comments, no trailing commas, no "
    "NaN/Infinity, unique member names";

[[noreturn]] void throw_invalid(std::size_t offset, const std::string& what) {
  throw Error(ErrorCode::JsonInvalid,
              "invalid JSON at byte " + std::to_string(offset) + ": " + what, kHint);
}

// nlohmann's messages may quote raw input; bytes >= 0x80 are shown as \xNN so that the message
// is valid UTF-8 even when the complaint is invalid UTF-8.
std::string sanitize(const std::string& text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

// An input iterator that publishes how far nlohmann's lexer has read: nlohmann hands positions
// only to parse_error, and the handler needs them for duplicate names and the depth limit.
class TrackingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* p, const char** read) : p_(p), read_(read) {}
  reference operator*() const { return *p_; }
  TrackingIterator& operator++() {
    *read_ = ++p_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackingIterator& other) const { return p_ == other.p_; }
  bool operator!=(const TrackingIterator& other) const { return p_ != other.p_; }

 private:
  const char* p_;
  const char** read_;
};

// The SAX handler: forwards events to TreeBuilder, refuses depth, turns nlohmann's errors into
// ours. Every refusal throws, so nlohmann never sees a `false`.
class Handler {
 public:
  Handler(std::string_view text, TreeBuilder& builder)
      : text_(text), read_(text.data()), builder_(builder) {}

  const char** read_slot() { return &read_; }

  bool null() {
    builder_.null();
    return done();
  }
  bool boolean(bool value) {
    builder_.boolean(value);
    return done();
  }
  bool number_integer(json::number_integer_t value) { return integer(value); }
  bool number_unsigned(json::number_unsigned_t value) { return integer(value); }
  // nlohmann passes the token as written, so "4.50" and "1E30" keep their spelling.
  bool number_float(json::number_float_t, const json::string_t& spelling) {
    builder_.number(spelling);
    return done();
  }
  bool string(json::string_t& value) {
    builder_.string(std::move(value));  // the lexer clears its buffer before the next token
    return done();
  }
  bool binary(json::binary_t&) { return false; }  // the JSON text format never produces one

  bool start_object(std::size_t) {
    enter();
    builder_.begin_object();
    return done();
  }
  bool key(json::string_t& name) {
    builder_.key(std::move(name), key_offset());
    return true;
  }
  bool end_object() {
    --depth_;
    builder_.end_object();
    return done();
  }
  bool start_array(std::size_t) {
    enter();
    builder_.begin_array();
    return done();
  }
  bool end_array() {
    --depth_;
    builder_.end_array();
    return done();
  }

  bool parse_error(std::size_t position, const std::string& last_token, const json::exception& ex) {
    const std::string what = ex.what();
    const std::size_t offset = error_offset(position, last_token, what);
    if (ex.id == 406) {  // out_of_range: a number beyond the range of a double
      const std::string where = builder_.next_pointer();
      throw Error(ErrorCode::NumberPrecision,
                  "number " + sanitize(last_token.substr(0, 40)) + " at " +
                      (where.empty() ? "\"\" (the document)" : where) + " (byte " +
                      std::to_string(offset) + ") is too large for an IEEE double",
                  "send it as a string");
    }
    const std::size_t colon = what.find(": ");  // after "[json.exception...] ... column N"
    throw_invalid(offset, sanitize(colon == std::string::npos ? what : what.substr(colon + 2)));
  }

 private:
  template <typename Int>
  bool integer(Int value) {
    // nlohmann converted the digits already; to_chars gives them back exactly. Only "-0" loses
    // its sign, which no canonical form or exactness test can tell apart from "0".
    char buf[24];
    const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    builder_.number(std::string(buf, end));
    return done();
  }

  void enter() {
    if (++depth_ > kMaxDepth) {
      // The lexer has read exactly the bracket: single-character tokens need no lookahead.
      throw_invalid(offset_read() - 1,
                    "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    }
  }

  // Where an error nlohmann reports lies. `position` counts the bytes its lexer consumed, a
  // number's lookahead excluded. A lexer error ("; last read:") stops on the offending byte. A
  // syntax error has consumed a whole unexpected token; we report where that token starts.
  // `last_token` is only that token for strings and numbers (the lexer does not restart its
  // record for literals and punctuation), so the others are measured by their known length.
  std::size_t error_offset(std::size_t position, const std::string& last_token,
                           const std::string& what) const {
    std::size_t back = 1;  // lexer errors and one-byte punctuation
    if (what.find("; last read: '") != std::string::npos) {
      // the lexer stopped on the offending byte
    } else if (what.find("unexpected end of input") != std::string::npos) {
      // nlohmann takes a NUL byte outside a string for the end of the input: name the NUL.
      return position >= 1 && position - 1 < text_.size() ? position - 1 : text_.size();
    } else if (what.find("unexpected number literal") != std::string::npos ||
               what.find("unexpected string literal") != std::string::npos ||
               what.find("number overflow") != std::string::npos) {
      back = last_token.size();
    } else if (what.find("unexpected false literal") != std::string::npos) {
      back = 5;
    } else if (what.find("unexpected true literal") != std::string::npos ||
               what.find("unexpected null literal") != std::string::npos) {
      back = 4;
    }
    const std::size_t offset = position >= back ? position - back : 0;
    return offset < text_.size() ? offset : text_.size();
  }

  std::size_t offset_read() const { return static_cast<std::size_t>(read_ - text_.data()); }

  // Marks where the last event's token ended (give or take a number's lookahead byte).
  bool done() {
    mark_ = offset_read();
    return true;
  }

  // A member name starts at the first quote after the previous event: only '{' or a value, then
  // whitespace and a comma, separate them. Scanning that gap is cheaper than tracking tokens.
  std::size_t key_offset() const {
    std::size_t i = mark_;
    while (i < text_.size() && text_[i] != '"') ++i;
    return i;
  }

  std::string_view text_;
  const char* read_;
  TreeBuilder& builder_;
  std::size_t depth_ = 0;
  std::size_t mark_ = 0;
};

}  // namespace

Value parse_strict_nlohmann(std::string_view text) {
  // nlohmann skips a UTF-8 byte order mark silently; RFC 8259 forbids sending one, and a strict
  // parser accepts only what a conforming sender may send.
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) {
    throw_invalid(0, "byte order mark (RFC 8259 forbids sending one)");
  }
  TreeBuilder builder;
  Handler handler(text, builder);
  const char** read = handler.read_slot();
  const TrackingIterator first(text.data(), read);
  const TrackingIterator last(text.data() + text.size(), read);
  if (!json::sax_parse(first, last, &handler, json::input_format_t::json, /*strict=*/true,
                       /*ignore_comments=*/false)) {
    throw Error(ErrorCode::Internal, "JSON parser stopped without an error");
  }
  // nlohmann stopped at a NUL byte after the document, taking it for the end of the input.
  if (*read != text.data() && (*read)[-1] == '\0') {
    throw_invalid(static_cast<std::size_t>(*read - text.data()) - 1,
                  "syntax error while parsing value - NUL byte after the document");
  }
  return builder.finish();
}

}  // namespace idem::json::reference
