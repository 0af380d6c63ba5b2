// parse_strict: a hand-written single-pass strict JSON parser over the input bytes, building the
// Value itself. Its refusals name the same byte offsets, in the same words, as the nlohmann-json
// parser it replaced (kept as the reference it is tested against: tests/reference/).
#include "core/json/parser.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/interrupts.hpp"
#include "core/json/lexical.hpp"
#include "core/json/parse_messages.hpp"
#include "core/json/pointer.hpp"

namespace idem::json {
namespace {

using namespace detail;  // the parser's lexical helpers and messages

// Largest number of integer digits that cannot overflow a double (10^308 - 1 < DBL_MAX).
constexpr std::size_t kSafeIntegerDigits = 308;

class Parser {
 public:
  explicit Parser(std::string_view text)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), token_(begin_) {}

  Value run();

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
  void open(bool array) { frames_[depth_++] = Frame{array, values_.size(), keys_.size()}; }
  void close_array();
  void close_object();
  std::string next_pointer() const;

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
  void scan_string(Ctx ctx, std::string& out);
  const char* utf8_sequence(const char* q, Ctx ctx) const;
  void escape(std::string& out, Ctx ctx);
  std::uint32_t hex4(Ctx ctx);

  const char* const begin_;
  const char* p_;
  const char* const end_;
  // Where the last string or number token started: messages quote the input from there.
  const char* token_;
  // Finished values of the open containers, innermost last, then the document itself; member
  // names of the open objects and the byte offsets of their opening quotes.
  std::vector<Value> values_;
  std::vector<std::string> keys_;
  std::vector<std::size_t> key_offsets_;
  Frame frames_[kMaxDepth];
  std::size_t depth_ = 0;
};

// An array takes its elements off the stack, in one allocation of the exact size.
void Parser::close_array() {
  const Frame f = frames_[--depth_];
  Value array;
  array.kind = Kind::Array;
  array.items.assign(std::make_move_iterator(values_.begin() + f.items),
                     std::make_move_iterator(values_.end()));
  values_.resize(f.items);
  values_.push_back(std::move(array));
}

// An object refuses duplicate names (as TreeBuilder does), then takes its members.
void Parser::close_object() {
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
std::string Parser::next_pointer() const {
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

void Parser::scan_number(Ctx ctx, std::size_t& int_digits, bool& has_exponent) {
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

// A number in value position: kept as written; refused when it overflows a double.
void Parser::number() {
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
        const std::string where = next_pointer();
        const std::size_t shown = std::min<std::size_t>(static_cast<std::size_t>(p_ - start), 40);
        throw Error(ErrorCode::NumberPrecision,
                    "number " + std::string(start, shown) + " at " +
                        (where.empty() ? "\"\" (the document)" : where) + " (byte " +
                        std::to_string(start - begin_) + ") is too large for an IEEE double",
                    "send it as a string");
      }
    }
  }
  // (pointer, length): the iterator-pair overloads go through the slower _M_replace
  push(Kind::Number).text.append(start, static_cast<std::size_t>(p_ - start));
}

// One UTF-8 sequence starting at lead byte `q` (>= 0x80), RFC 3629 ranges: no overlong forms,
// no encoded surrogates, nothing above U+10FFFF. Returns the byte after it.
const char* Parser::utf8_sequence(const char* q, Ctx ctx) const {
  const unsigned char c = static_cast<unsigned char>(*q);
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  int continuation = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    continuation = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    continuation = 2;
    if (c == 0xE0) lo = 0xA0;  // overlong below U+0800
    if (c == 0xED) hi = 0x9F;  // U+D800..U+DFFF
  } else if (c >= 0xF0 && c <= 0xF4) {
    continuation = 3;
    if (c == 0xF0) lo = 0x90;  // overlong below U+10000
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    lex_error(q, "invalid string: ill-formed UTF-8 byte", ctx);
  }
  ++q;
  for (int i = 0; i < continuation; ++i, ++q) {
    if (q == end_) lex_error(q, "invalid string: ill-formed UTF-8 byte", ctx);
    const unsigned char b = static_cast<unsigned char>(*q);
    if (b < lo || b > hi) lex_error(q, "invalid string: ill-formed UTF-8 byte", ctx);
    lo = 0x80;
    hi = 0xBF;
  }
  return q;
}

std::uint32_t Parser::hex4(Ctx ctx) {
  std::uint32_t cp = 0;
  for (int i = 0; i < 4; ++i, ++p_) {
    const int h = p_ < end_ ? hex_value(*p_) : -1;
    if (h < 0) lex_error(p_, "invalid string: '\\u' must be followed by 4 hex digits", ctx);
    cp = (cp << 4) | static_cast<std::uint32_t>(h);
  }
  return cp;
}

// The escape after a backslash (p_ is on the byte after it), decoded onto `out`.
void Parser::escape(std::string& out, Ctx ctx) {
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
      append_utf8(out, cp);
      return;
    }
    default: lex_error(p_, "invalid string: forbidden character after backslash", ctx);
  }
  out += decoded;
  ++p_;
}

// A string token (p_ on its opening quote), decoded to UTF-8 into `out` (empty). Runs of plain
// ASCII are skipped by a table lookup and copied in one piece.
void Parser::scan_string(Ctx ctx, std::string& out) {
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
      escape(out, ctx);
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
void Parser::fail(Ctx ctx) {
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
      scan_string(ctx, ignored);
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

Value Parser::run() {
  // RFC 8259 forbids sending a byte order mark; refuse a broken one as a lexer would.
  if (p_ < end_ && static_cast<unsigned char>(*p_) == 0xEF) {
    if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) {
      throw_invalid(0, "byte order mark (RFC 8259 forbids sending one)");
    }
    const char* at = p_ + 1;
    if (at < end_ && static_cast<unsigned char>(*at) == 0xBB) ++at;
    lex_error(at, "invalid BOM; must be 0xEF 0xBB 0xBF if given", Ctx::Value);
  }
  values_.reserve(64);
  keys_.reserve(32);
  key_offsets_.reserve(32);

  skip_space();
value:
  poll_interrupts();
  if (p_ == end_) fail(Ctx::Value);
  switch (*p_) {
    case '"': scan_string(Ctx::Value, push(Kind::String).text); break;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': number(); break;
    case 't':
      literal("true", 4, Ctx::Value);
      push(Kind::True);
      break;
    case 'f':
      literal("false", 5, Ctx::Value);
      push(Kind::False);
      break;
    case 'n':
      literal("null", 4, Ctx::Value);
      push(Kind::Null);
      break;
    case '[':
    case '{': {
      // Nesting never recurses: frames_ holds the open containers.
      const bool array = *p_ == '[';
      if (depth_ == kMaxDepth) {
        throw_invalid(offset(p_), "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      }
      ++p_;
      skip_space();
      if (array) {
        if (p_ < end_ && *p_ == ']') {
          ++p_;
          push(Kind::Array);
          break;
        }
        open(true);
        goto value;
      }
      if (p_ < end_ && *p_ == '}') {
        ++p_;
        push(Kind::Object);
        break;
      }
      open(false);
      if (p_ == end_ || *p_ != '"') fail(Ctx::ObjectKey);
      goto key;
    }
    default: fail(Ctx::Value);
  }

after_value:
  skip_space();
  if (depth_ == 0) {
    if (p_ != end_) fail(Ctx::End);
    return std::move(values_.front());
  }
  if (frames_[depth_ - 1].array) {
    if (p_ < end_ && *p_ == ',') {
      ++p_;
      skip_space();
      goto value;
    }
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      close_array();
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
    close_object();
    goto after_value;
  }
  fail(Ctx::Object);

key:
  key_offsets_.push_back(offset(p_));
  scan_string(Ctx::ObjectKey, keys_.emplace_back());
  skip_space();
  if (p_ == end_ || *p_ != ':') fail(Ctx::ObjectSeparator);
  ++p_;
  skip_space();
  goto value;
}

}  // namespace

Value parse_strict(std::string_view text) { return Parser(text).run(); }

}  // namespace idem::json
