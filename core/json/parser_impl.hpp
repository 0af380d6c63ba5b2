// The strict parser's scanning code, as a template over what it feeds: `parse_strict` builds a
// Value with it (parser.cpp, TreeSink), the fingerprint writes canonical bytes with it in the same
// pass (canonical_text.cpp, CanonicalSink). The refusals (byte offsets, words, order) are the
// parser's own and do not depend on the sink; a sink refuses only duplicate names, when an object
// closes, as both sinks do.
//
// What a Sink provides (every call is in document order):
//   static constexpr bool kCanonicalStrings;    string values: RFC 8785 form (true) or decoded
//   Out& begin_string();                        a string value is appended here (Out: std::string
//   void end_string();                          or Bytes) ... and is complete
//   void number(const char* spelling, std::size_t length);   a valid RFC 8259 number, not too large
//   void boolean(bool); void null();
//   void empty_array(); void empty_object();    "[]" / "{}"
//   void open(bool array);                      "[" / "{" with at least one element or member
//   Out& begin_key(std::size_t offset);         a member name, decoded (offset: its opening quote)
//   void end_key(std::size_t raw_length);       ... complete; raw_length: its bytes in the input
//                                               between the quotes (equal to the decoded length
//                                               exactly when it has no escape)
//   void close_array(); void close_object();    the matching "]" / "}"
//   std::string next_pointer() const;           RFC 6901 pointer of the place the next value takes
//   R finish();                                 the root is complete; run() returns it
// Internal header: include it only from core/json/*.cpp.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "core/interrupts.hpp"
#include "core/json/canonical_detail.hpp"
#include "core/json/lexical.hpp"
#include "core/json/parse_messages.hpp"
#include "core/json/parser.hpp"

namespace idem::json::detail {

// Largest number of integer digits that cannot overflow a double (10^308 - 1 < DBL_MAX).
inline constexpr std::size_t kSafeIntegerDigits = 308;

template <class Sink>
class BasicParser {
 public:
  BasicParser(std::string_view text, Sink& sink)
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        token_(begin_),
        sink_(sink) {}

  decltype(auto) run();

 private:
  std::size_t offset(const char* at) const {
    return at < end_ ? static_cast<std::size_t>(at - begin_)
                     : static_cast<std::size_t>(end_ - begin_);
  }

  void skip_space() {
    while (p_ < end_ && kSpace[static_cast<unsigned char>(*p_)]) ++p_;
  }

  // A lexical error: `at` is the offending byte (end_ when the input ended too early). The
  // message quotes the input from the start of the last string or number token through it.
  [[noreturn]] void lex_error(const char* at, const std::string& what, Ctx ctx) const {
    const CtxText t = ctx_text(ctx);
    std::string message = std::string("syntax error while parsing ") + t.context + " - " + what +
                          "; last read: '" + quote_input(token_, at < end_ ? at + 1 : end_) + "'";
    if (ctx != Ctx::Value) message += std::string("; expected ") + t.expected;
    throw_invalid(offset(at), message);
  }

  // A whole token that may not stand here, starting at `at`.
  [[noreturn]] void unexpected(const char* at, const char* name, Ctx ctx) const {
    const CtxText t = ctx_text(ctx);
    throw_invalid(offset(at), std::string("syntax error while parsing ") + t.context +
                                  " - unexpected " + name + "; expected " + t.expected);
  }

  [[noreturn]] void fail(Ctx ctx);

  void literal(const char* word, std::size_t n, Ctx ctx) {
    if (static_cast<std::size_t>(end_ - p_) >= n && std::memcmp(p_, word, n) == 0) {
      p_ += n;
      return;
    }
    for (std::size_t i = 1; i < n; ++i) {
      if (p_ + i == end_ || p_[i] != word[i]) lex_error(p_ + i, "invalid literal", ctx);
    }
  }

  // Reads a number's token by the RFC 8259 grammar; returns its integer-part digit count and
  // whether it has an exponent through the out parameters.
  void scan_number(Ctx ctx, std::size_t& int_digits, bool& has_exponent);
  void number();
  // kCanonical: append the string's RFC 8785 form (without its quotes) instead of its decoded
  // text. The two differ only at escapes: the bytes between them are copied as they are in both.
  template <bool kCanonical, class Out>
  void scan_string(Ctx ctx, Out& out);
  const char* utf8_sequence(const char* q, Ctx ctx) const;
  template <bool kCanonical, class Out>
  void escape(Out& out, Ctx ctx);
  std::uint32_t hex4(Ctx ctx);

  const char* const begin_;
  const char* p_;
  const char* const end_;
  // Where the last string or number token started: messages quote the input from there.
  const char* token_;
  Sink& sink_;
  // Whether each open container is an array, outermost first.
  bool array_[kMaxDepth];
  std::size_t depth_ = 0;
};

template <class Sink>
void BasicParser<Sink>::scan_number(Ctx ctx, std::size_t& int_digits, bool& has_exponent) {
  token_ = p_;
  if (*p_ == '-') {
    ++p_;
    if (p_ == end_ || !is_digit(*p_))
      lex_error(p_, "invalid number; expected digit after '-'", ctx);
  }
  const char* const int_start = p_;
  if (*p_ == '0') {
    ++p_;  // a leading zero is a whole integer part: "01" is two tokens
  } else {
    while (p_ < end_ && is_digit(*p_)) ++p_;
  }
  int_digits = static_cast<std::size_t>(p_ - int_start);
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    if (p_ == end_ || !is_digit(*p_))
      lex_error(p_, "invalid number; expected digit after '.'", ctx);
    while (p_ < end_ && is_digit(*p_)) ++p_;
  }
  has_exponent = false;
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    has_exponent = true;
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) {
      ++p_;
      if (p_ == end_ || !is_digit(*p_)) {
        lex_error(p_, "invalid number; expected digit after exponent sign", ctx);
      }
    } else if (p_ == end_ || !is_digit(*p_)) {
      lex_error(p_, "invalid number; expected '+', '-', or digit after exponent", ctx);
    }
    while (p_ < end_ && is_digit(*p_)) ++p_;
  }
}

// A number in value position: handed over as written; refused when it overflows a double.
template <class Sink>
void BasicParser<Sink>::number() {
  const char* const start = p_;
  std::size_t int_digits = 0;
  bool has_exponent = false;
  scan_number(Ctx::Value, int_digits, has_exponent);
  if (has_exponent || int_digits > kSafeIntegerDigits) {
    double value = 0;
    const auto result = std::from_chars(start, p_, value);
    if (result.ec == std::errc::result_out_of_range) {
      // from_chars says the same for overflow and underflow (which rounds to 0 and is accepted):
      // the decimal exponent of the first significant digit tells them apart.
      const char* q = start + (*start == '-' ? 1 : 0);
      std::int64_t magnitude = 0;
      if (*q != '0') {
        magnitude = static_cast<std::int64_t>(int_digits);
      } else if (q + 1 < p_ && q[1] == '.') {
        for (q += 2; q < p_ && *q == '0'; ++q) --magnitude;
      }
      if (has_exponent) {
        const char* e = start;
        while (*e != 'e' && *e != 'E') ++e;
        ++e;
        const bool negative = *e == '-';
        if (*e == '+' || *e == '-') ++e;
        std::int64_t exp = 0;
        for (; e < p_ && exp < 1'000'000'000; ++e) exp = exp * 10 + (*e - '0');
        magnitude += negative ? -exp : exp;
      }
      if (magnitude > 0) {
        const std::string where = sink_.next_pointer();
        const std::size_t shown = std::min<std::size_t>(static_cast<std::size_t>(p_ - start), 40);
        throw Error(ErrorCode::NumberPrecision,
                    "number " + std::string(start, shown) + " at " +
                        (where.empty() ? "\"\" (the document)" : where) + " (byte " +
                        std::to_string(start - begin_) + ") is too large for an IEEE double",
                    "send it as a string");
      }
    }
  }
  sink_.number(start, static_cast<std::size_t>(p_ - start));
}

// One UTF-8 sequence starting at lead byte `q` (>= 0x80) (lexical.hpp's utf8_sequence_end).
// Returns the byte after it.
template <class Sink>
const char* BasicParser<Sink>::utf8_sequence(const char* q, Ctx ctx) const {
  const char* bad = q;
  const char* const after = utf8_sequence_end(q, end_, bad);
  if (after == nullptr) lex_error(bad, "invalid string: ill-formed UTF-8 byte", ctx);
  return after;
}

template <class Sink>
std::uint32_t BasicParser<Sink>::hex4(Ctx ctx) {
  std::uint32_t cp = 0;
  for (int i = 0; i < 4; ++i, ++p_) {
    const int h = p_ < end_ ? hex_value(*p_) : -1;
    if (h < 0) lex_error(p_, "invalid string: '\\u' must be followed by 4 hex digits", ctx);
    cp = (cp << 4) | static_cast<std::uint32_t>(h);
  }
  return cp;
}

// The escape after a backslash (p_ is on the byte after it), decoded onto `out`, or (kCanonical)
// written as RFC 8785 writes the character it stands for.
template <class Sink>
template <bool kCanonical, class Out>
void BasicParser<Sink>::escape(Out& out, Ctx ctx) {
  static const char* const kUnpairedHigh =
      "invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF";
  if (p_ == end_) lex_error(p_, "invalid string: forbidden character after backslash", ctx);
  char decoded;
  switch (*p_) {
    case '"': decoded = '"'; break;
    case '\\': decoded = '\\'; break;
    case '/': decoded = '/'; break;
    case 'b': decoded = '\b'; break;
    case 'f': decoded = '\f'; break;
    case 'n': decoded = '\n'; break;
    case 'r': decoded = '\r'; break;
    case 't': decoded = '\t'; break;
    case 'u': {
      ++p_;
      std::uint32_t cp = hex4(ctx);
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (p_ == end_ || *p_ != '\\') lex_error(p_, kUnpairedHigh, ctx);
        ++p_;
        if (p_ == end_ || *p_ != 'u') lex_error(p_, kUnpairedHigh, ctx);
        ++p_;
        const std::uint32_t low = hex4(ctx);
        if (low < 0xDC00 || low > 0xDFFF) lex_error(p_ - 1, kUnpairedHigh, ctx);
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        lex_error(p_ - 1, "invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF",
                  ctx);
      }
      if (kCanonical && (cp < 0x20 || cp == '"' || cp == '\\')) {
        append_canonical_escape(out, static_cast<unsigned char>(cp));
      } else {
        append_utf8(out, cp);
      }
      return;
    }
    default: lex_error(p_, "invalid string: forbidden character after backslash", ctx);
  }
  if (kCanonical && decoded != '/') {
    append_canonical_escape(out, static_cast<unsigned char>(decoded));
  } else {
    out.push_back(decoded);
  }
  ++p_;
}

// A string token (p_ on its opening quote), decoded to UTF-8 and appended to `out`. Runs of plain
// ASCII are skipped by a table lookup and copied in one piece.
template <class Sink>
template <bool kCanonical, class Out>
void BasicParser<Sink>::scan_string(Ctx ctx, Out& out) {
  token_ = p_;
  const char* run = ++p_;  // first byte not yet copied
  for (;;) {
    const char* q = p_;
    while (end_ - q >= 8 && !has_special_byte(q)) q += 8;
    while (q < end_ && kPlain[static_cast<unsigned char>(*q)]) ++q;
    if (q == end_) lex_error(q, "invalid string: missing closing quote", ctx);
    const unsigned char c = static_cast<unsigned char>(*q);
    if (c == '"') {
      p_ = q + 1;
      out.append(run, static_cast<std::size_t>(q - run));
      return;
    }
    if (c == '\\') {
      out.append(run, static_cast<std::size_t>(q - run));
      p_ = q + 1;
      escape<kCanonical>(out, ctx);
      run = p_;
      continue;
    }
    if (c < 0x20) {
      p_ = q;
      lex_error(q, control_message(c), ctx);
    }
    p_ = utf8_sequence(q, ctx);
  }
}

// The token at p_ (whitespace skipped) may not stand here: read it whole, as a lexer would, and
// refuse it with its lexical error if it has one, else as an unexpected token.
template <class Sink>
void BasicParser<Sink>::fail(Ctx ctx) {
  const char* const at = p_;
  if (p_ == end_) unexpected(p_, "end of input", ctx);
  switch (*p_) {
    case '[': unexpected(at, "'['", ctx);
    case ']': unexpected(at, "']'", ctx);
    case '{': unexpected(at, "'{'", ctx);
    case '}': unexpected(at, "'}'", ctx);
    case ':': unexpected(at, "':'", ctx);
    case ',': unexpected(at, "','", ctx);
    case 't': literal("true", 4, ctx); unexpected(at, "true literal", ctx);
    case 'f': literal("false", 5, ctx); unexpected(at, "false literal", ctx);
    case 'n': literal("null", 4, ctx); unexpected(at, "null literal", ctx);
    case '"': {
      std::string ignored;
      scan_string<false>(ctx, ignored);
      unexpected(at, "string literal", ctx);
    }
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': {
      std::size_t int_digits = 0;
      bool has_exponent = false;
      scan_number(ctx, int_digits, has_exponent);
      unexpected(at, "number literal", ctx);
    }
    default: lex_error(at, "invalid literal", ctx);
  }
}

template <class Sink>
decltype(auto) BasicParser<Sink>::run() {
  // RFC 8259 forbids sending a byte order mark; refuse a broken one as a lexer would.
  if (p_ < end_ && static_cast<unsigned char>(*p_) == 0xEF) {
    if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) {
      throw_invalid(0, "byte order mark (RFC 8259 forbids sending one)");
    }
    const char* at = p_ + 1;
    if (at < end_ && static_cast<unsigned char>(*at) == 0xBB) ++at;
    lex_error(at, "invalid BOM; must be 0xEF 0xBB 0xBF if given", Ctx::Value);
  }

  skip_space();
value:
  poll_interrupts();
  if (p_ == end_) fail(Ctx::Value);
  switch (*p_) {
    case '"':
      scan_string<Sink::kCanonicalStrings>(Ctx::Value, sink_.begin_string());
      sink_.end_string();
      break;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': number(); break;
    case 't':
      literal("true", 4, Ctx::Value);
      sink_.boolean(true);
      break;
    case 'f':
      literal("false", 5, Ctx::Value);
      sink_.boolean(false);
      break;
    case 'n':
      literal("null", 4, Ctx::Value);
      sink_.null();
      break;
    case '[':
    case '{': {
      // Nesting never recurses: array_ and the sink hold the open containers.
      const bool array = *p_ == '[';
      if (depth_ == kMaxDepth) {
        throw_invalid(offset(p_), "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      }
      ++p_;
      skip_space();
      if (array) {
        if (p_ < end_ && *p_ == ']') {
          ++p_;
          sink_.empty_array();
          break;
        }
        array_[depth_++] = true;
        sink_.open(true);
        goto value;
      }
      if (p_ < end_ && *p_ == '}') {
        ++p_;
        sink_.empty_object();
        break;
      }
      array_[depth_++] = false;
      sink_.open(false);
      if (p_ == end_ || *p_ != '"') fail(Ctx::ObjectKey);
      goto key;
    }
    default: fail(Ctx::Value);
  }

after_value:
  skip_space();
  if (depth_ == 0) {
    if (p_ != end_) fail(Ctx::End);
    return sink_.finish();
  }
  if (array_[depth_ - 1]) {
    if (p_ < end_ && *p_ == ',') {
      ++p_;
      skip_space();
      goto value;
    }
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      --depth_;
      sink_.close_array();
      goto after_value;
    }
    fail(Ctx::Array);
  }
  if (p_ < end_ && *p_ == ',') {
    ++p_;
    skip_space();
    if (p_ == end_ || *p_ != '"') fail(Ctx::ObjectKey);
    goto key;
  }
  if (p_ < end_ && *p_ == '}') {
    ++p_;
    --depth_;
    sink_.close_object();
    goto after_value;
  }
  fail(Ctx::Object);

key:
  {
    const char* const name = p_;
    scan_string<false>(Ctx::ObjectKey, sink_.begin_key(offset(name)));
    sink_.end_key(static_cast<std::size_t>(p_ - name) - 2);
  }
  skip_space();
  if (p_ == end_ || *p_ != ':') fail(Ctx::ObjectSeparator);
  ++p_;
  skip_space();
  goto value;
}

}  // namespace idem::json::detail
