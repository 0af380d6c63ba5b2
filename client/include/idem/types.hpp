// The plain values idem::Client and its internals share: options, an HTTP response, SQL rows as
// text. Included by idem/client.hpp and by the client's own internal headers, which must not
// include the public facade.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace idem {

enum class Profile {
  standard,   // a key reused with another body: 422 ERR_IDEMPOTENCY_PAYLOAD_MISMATCH
  reference,  // the reference design: 409 for that body conflict
};

struct ClientOptions {
  std::optional<std::chrono::milliseconds> ttl;    // nullopt: the server's idem.default_ttl (24 h)
  std::optional<std::chrono::milliseconds> lease;  // nullopt: the server's idem.lease_timeout (30 s)
  std::chrono::seconds retry_after{2};             // Retry-After when the server gives none
  Profile profile = Profile::standard;
  bool allow_missing_key = false;                  // true: a request without a key runs unguarded
  std::size_t pool_size = 4;                       // connections, opened on demand
  std::chrono::milliseconds acquire_timeout{5000}; // longest wait for a free connection
  std::size_t max_body_bytes = 1 << 20;            // larger bodies: 413 (the server's default bound)
  std::string problem_type_base = "urn:pg-idempotency:error:";  // problem+json "type" = base + name
  // true: the server runs on Citus (docs/citus.md): complete, checkpoint and release are sent in
  // their tenant-first forms, which Citus runs on the tenant's node (servers from 0.4.0 on).
  bool citus = false;
};

struct Header {
  std::string name;
  std::string value;
  bool operator==(const Header& o) const { return name == o.name && value == o.value; }
};

struct Response {
  int status = 200;
  std::vector<Header> headers;  // in order, duplicates kept (Set-Cookie)
  std::string body;             // bytes
  // The first header of that name (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
};

using SqlValue = std::optional<std::string>;  // text format; std::nullopt is SQL NULL
using SqlRow = std::vector<SqlValue>;

}  // namespace idem
