// The Idempotency-Key header as an RFC 8941 String (section 4.2.5), with the bare token form
// accepted as the same key; see idem/key_header.hpp. Positions in messages are 0-based bytes of
// the field value as received.
#include "idem/key_header.hpp"

#include <cctype>

namespace idem {
namespace {

constexpr std::string_view kName = "Idempotency-Key";

bool ows(char c) { return c == ' ' || c == '\t'; }

// RFC 9110 tchar, plus ':' and '/', which an RFC 8941 token also allows.
bool token_char(unsigned char c) {
  return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~:/").find(static_cast<char>(c)) != std::string_view::npos;
}

std::string hex_byte(unsigned char c) {
  static const char* const kDigits = "0123456789ABCDEF";
  return std::string("0x") + kDigits[c >> 4] + kDigits[c & 0xF];
}

std::string at(std::size_t pos) { return "position " + std::to_string(pos); }

KeyHeader refuse(std::string why) { return {std::nullopt, std::string(kName) + " " + std::move(why)}; }

bool printable(unsigned char c) { return c >= 0x20 && c <= 0x7E; }

// What follows a complete String or token at v[pos] (OWS already trimmed from the end): nothing,
// or the reason it is refused.
std::optional<KeyHeader> after_item(std::string_view v, std::size_t pos, bool quoted) {
  std::size_t i = pos;
  while (i < v.size() && ows(v[i])) ++i;
  if (i == v.size()) return std::nullopt;
  if (v[i] == ',') {
    return refuse("holds more than one value (the comma at " + at(i) +
                  " makes a list, as a proxy merging two headers would): send one key");
  }
  if (v[i] == ';') return refuse("has parameters (';' at " + at(i) + "): send the key alone");
  if (quoted) {
    return refuse("has more after the String's closing quote (at " + at(i) + "): send one String and nothing else");
  }
  return refuse("has a space at " + at(pos) + ": a bare key is one token; send a key with spaces as a String, \"...\"");
}

KeyHeader quoted(std::string_view v, std::size_t begin) {
  std::string key;
  for (std::size_t i = begin + 1; i < v.size(); ++i) {
    const auto c = static_cast<unsigned char>(v[i]);
    if (c == '"') {
      if (auto bad = after_item(v, i + 1, true)) return *bad;
      return {std::move(key), ""};
    }
    if (c == '\\') {
      if (i + 1 == v.size()) return refuse("ends in a backslash at " + at(i) + ", inside a String that is never closed");
      const auto next = static_cast<unsigned char>(v[i + 1]);
      if (next != '"' && next != '\\') {
        return refuse("has a backslash before " + (printable(next) ? "'" + std::string(1, next) + "'" : hex_byte(next)) +
                      " at " + at(i) + ": a String escapes only \\\" and \\\\");
      }
      key += static_cast<char>(next);
      ++i;
      continue;
    }
    if (!printable(c)) {
      return refuse("has a byte outside printable ASCII (" + hex_byte(c) + ") at " + at(i) +
                    ": a String holds only 0x20..0x7E");
    }
    key += static_cast<char>(c);
  }
  return refuse("opens a String at " + at(begin) + " and never closes it (no closing \")");
}

KeyHeader bare(std::string_view v, std::size_t begin) {
  const auto first = static_cast<unsigned char>(v[begin]);
  if (!std::isalnum(first) && first != '*') {
    std::string why = "must be a String (\"...\") or a bare token starting with a letter, a digit or '*'";
    if (first == '\'') why += "; single quotes do not delimit a String";
    if (first == ':') why += "; a Byte Sequence (:...:) is not a String";
    if (first == '?') why += "; a Boolean (?0, ?1) is not a String";
    if (first == '(') why += "; an Inner List is not a String";
    return refuse(why + " (found " + (printable(first) ? "'" + std::string(1, first) + "'" : hex_byte(first)) +
                  " at " + at(begin) + ")");
  }
  std::size_t i = begin;
  while (i < v.size() && token_char(static_cast<unsigned char>(v[i]))) ++i;
  if (i == v.size()) return {std::string(v.substr(begin)), ""};
  const auto c = static_cast<unsigned char>(v[i]);
  if (ows(static_cast<char>(c)) || c == ',' || c == ';') {
    if (auto bad = after_item(v, i, false)) return *bad;
    return {std::string(v.substr(begin, i - begin)), ""};  // unreachable: trailing OWS is trimmed
  }
  if (!printable(c)) return refuse("has a byte outside printable ASCII (" + hex_byte(c) + ") at " + at(i));
  return refuse("has '" + std::string(1, static_cast<char>(c)) + "' at " + at(i) +
                ", which a bare key cannot hold: send the key as a String, \"...\" (inside it, \\\" and \\\\ "
                "escape a quote and a backslash)");
}

}  // namespace

KeyHeader parse_key_header(std::string_view v) {
  std::size_t begin = 0, end = v.size();
  while (begin < end && ows(v[begin])) ++begin;
  while (end > begin && ows(v[end - 1])) --end;
  const std::string_view trimmed = v.substr(0, end);
  if (begin == end) return {std::string(), ""};
  return trimmed[begin] == '"' ? quoted(trimmed, begin) : bare(trimmed, begin);
}

KeyHeader parse_key_header(const std::vector<std::string>& field_lines) {
  if (field_lines.empty()) return {};
  if (field_lines.size() > 1) {
    return refuse("was sent " + std::to_string(field_lines.size()) +
                  " times: send it once, with one key (several lines of a header make a list)");
  }
  return parse_key_header(field_lines.front());
}

Response key_header_problem(const KeyHeader& header, const ClientOptions& options) {
  return problem_response(KeyInvalid("ERR_IDEMPOTENCY_KEY_INVALID", "IK002", header.error), options);
}

}  // namespace idem
