// Response comparison for the crash loop (responses.hpp).
#include "responses.hpp"

#include <cstdio>

namespace crash {

bool strip_replay_headers(idem::Response& response) {
  auto& h = response.headers;
  const std::size_t n = h.size();
  if (n < 2 || !(h[n - 2] == idem::Header{"X-Cache-Lookup", "IDEMPOTENT-HIT"}) ||
      !(h[n - 1] == idem::Header{"Idempotent-Replayed", "true"})) {
    return false;
  }
  h.resize(n - 2);
  return true;
}

bool same_response(const idem::Response& a, const idem::Response& b) {
  return a.status == b.status && a.headers == b.headers && a.body == b.body;
}

std::string describe(const idem::Response& response) {
  std::string out = std::to_string(response.status);
  for (const auto& h : response.headers) out += " [" + h.name + ": " + h.value + "]";
  out += " body \"";
  for (unsigned char c : response.body) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + "\"";
}

bool is_in_progress(const idem::Response& response) {
  return response.status == 409 && response.header("Retry-After") &&
         response.body.find("ERR_IDEMPOTENCY_IN_PROGRESS") != std::string::npos;
}

bool is_mismatch(const idem::Response& response) {
  return response.status == 422 && response.body.find("ERR_IDEMPOTENCY_PAYLOAD_MISMATCH") != std::string::npos;
}

}  // namespace crash
