// The command line: --listen HOST:PORT, --db URL, --allow-remote (flags override the environment).
#pragma once

#include <string>

namespace processor {

struct Options {
  std::string host = "127.0.0.1";
  int port = 7401;  // 0: any free port (the one chosen is printed)
  std::string db_url;
  bool allow_remote = false;
  bool help = false;
};

inline constexpr const char* kUsage =
    "usage: payment-processor [--listen HOST:PORT] --db POSTGRES_URL [--allow-remote]\n"
    "  --listen HOST:PORT  where to serve (env PROCESSOR_LISTEN; default 127.0.0.1:7401)\n"
    "  --db URL            libpq connection URI (env PROCESSOR_DB_URL; required)\n"
    "  --allow-remote      allow a non-loopback HOST (the fault controls are unauthenticated)\n";

// Reads PROCESSOR_LISTEN and PROCESSOR_DB_URL, then argv. Throws std::invalid_argument saying
// which flag is wrong.
Options parse_options(int argc, char** argv);

// 127.0.0.0/8, ::1 or "localhost".
bool is_loopback(const std::string& host);

// http://HOST:PORT, with brackets around an IPv6 HOST.
std::string base_url(const std::string& host, int port);

}  // namespace processor
