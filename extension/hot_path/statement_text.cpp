#include "extension/hot_path/statement_text.hpp"

#include <stdexcept>

namespace idem::hot {

std::string joined(const char* const* names, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out.append(i == 0 ? "" : ", ").append(names[i]);
  return out;
}

std::string placeholders(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out.append(i == 1 ? "$" : ", $").append(std::to_string(i));
  return out;
}

std::string with_params(std::string_view text, const char* const* params, int n) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      out.push_back(text[i]);
      continue;
    }
    const std::size_t end = text.find('}', i);
    const std::string_view name = text.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1);
    int k = 0;
    while (k < n && name != params[k]) ++k;
    if (end == std::string_view::npos || k == n) throw std::logic_error("unknown statement parameter {" + std::string(name) + "}");
    out.append("$").append(std::to_string(k + 1));
    i = end;
  }
  return out;
}

}  // namespace idem::hot
