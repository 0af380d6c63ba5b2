#include "sql_text.hpp"

#include "idem/client.hpp"

namespace idem::sql_text {

std::string hex_bytea(std::string_view bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\\x";
  out.reserve(2 + 2 * bytes.size());
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  throw DatabaseError("ERR_CLIENT_DATABASE", "", "bytea output is not hex");
}

}  // namespace

std::string unhex_bytea(const std::string& text) {
  if (text.size() < 2 || text.compare(0, 2, "\\x") != 0 || text.size() % 2 != 0) {
    throw DatabaseError("ERR_CLIENT_DATABASE", "", "bytea output is not in hex format (bytea_output = hex)");
  }
  std::string out;
  out.reserve(text.size() / 2 - 1);
  for (std::size_t i = 2; i < text.size(); i += 2) out += static_cast<char>(hex_digit(text[i]) * 16 + hex_digit(text[i + 1]));
  return out;
}

SqlValue interval(const std::optional<std::chrono::milliseconds>& d) {
  if (!d) return std::nullopt;
  return std::to_string(d->count()) + " milliseconds";
}

std::vector<std::string> text_array(const std::string& text) {
  // PostgreSQL's output of a one-dimensional text[]: an element is quoted when it is empty or holds
  // a space, a comma, a brace, a quote or a backslash (those two escaped with a backslash), and
  // NULL unquoted is no element at all.
  std::vector<std::string> words;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return words;
  std::size_t i = 1;
  const std::size_t end = text.size() - 1;
  while (i < end) {
    std::string word;
    bool quoted = false;
    if (text[i] == '"') {
      quoted = true;
      for (++i; i < end && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < end) ++i;
        word += text[i];
      }
      ++i;  // the closing quote
    } else {
      for (; i < end && text[i] != ','; ++i) word += text[i];
    }
    if (quoted || word != "NULL") words.push_back(word);
    if (i < end && text[i] == ',') ++i;
  }
  return words;
}

}  // namespace idem::sql_text
