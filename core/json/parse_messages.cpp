// The parser's messages (see parse_messages.hpp).
#include "core/json/parse_messages.hpp"

#include "core/error.hpp"

namespace idem::json::detail {
namespace {

const char kHint[] =
    "send one JSON value in UTF-8 (RFC 8259, I-JSON): no comments, no trailing commas, no "
    "NaN/Infinity, unique member names";

}  // namespace

[[noreturn]] void throw_invalid(std::size_t offset, const std::string& what) {
  throw Error(ErrorCode::JsonInvalid,
              "invalid JSON at byte " + std::to_string(offset) + ": " + what, kHint);
}

CtxText ctx_text(Ctx ctx) {
  switch (ctx) {
    case Ctx::Value: return {"value", "'[', '{', or a literal"};
    case Ctx::ObjectKey: return {"object key", "string literal"};
    case Ctx::ObjectSeparator: return {"object separator", "':'"};
    case Ctx::Array: return {"array", "']'"};
    case Ctx::Object: return {"object", "'}'"};
    case Ctx::End: return {"value", "end of input"};
  }
  return {"value", "'[', '{', or a literal"};
}

std::string quote_input(const char* from, const char* to) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char* p = from; p < to; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c < 0x20) {
      out += "<U+00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      out += '>';
    } else if (c >= 0x80) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string control_message(unsigned char c) {
  static const char* const kNames[32] = {"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL",
                                         "BS",  "HT",  "LF",  "VT",  "FF",  "CR",  "SO",  "SI",
                                         "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB",
                                         "CAN", "EM",  "SUB", "ESC", "FS",  "GS",  "RS",  "US"};
  static const char kHex[] = "0123456789ABCDEF";
  const std::string code = std::string("00") + kHex[c >> 4] + kHex[c & 0xF];
  std::string out = "invalid string: control character U+" + code + " (" + kNames[c] +
                    ") must be escaped to \\u" + code;
  switch (c) {
    case '\b': out += " or \\b"; break;
    case '\t': out += " or \\t"; break;
    case '\n': out += " or \\n"; break;
    case '\f': out += " or \\f"; break;
    case '\r': out += " or \\r"; break;
    default: break;
  }
  return out;
}

}  // namespace idem::json::detail
