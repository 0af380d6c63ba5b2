// How the strict parser words its refusals: the contexts it names, how raw input is quoted, and
// the one exception it throws. Kept apart from the parser so the scanning code reads on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace idem::json::detail {

// Throws ErrorCode::JsonInvalid, "invalid JSON at byte <offset>: <what>", with the parser's hint.
[[noreturn]] void throw_invalid(std::size_t offset, const std::string& what);

// Where the parser wanted a token, named as the messages name it: "while parsing <context>", and
// what was expected there.
enum class Ctx : std::uint8_t { Value, ObjectKey, ObjectSeparator, Array, Object, End };

struct CtxText {
  const char* context;
  const char* expected;
};

CtxText ctx_text(Ctx ctx);

// Raw input quoted in a message: control characters as <U+XXXX>, bytes >= 0x80 as \xNN, so the
// message is one line of valid UTF-8 whatever the input.
std::string quote_input(const char* from, const char* to);

// The refusal of an unescaped control character inside a string.
std::string control_message(unsigned char c);

}  // namespace idem::json::detail
