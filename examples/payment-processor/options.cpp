// Command-line and environment parsing; see options.hpp.
#include "options.hpp"

#include <arpa/inet.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>

namespace processor {
namespace {

// "127.0.0.1:7401" or "[::1]:7401".
void parse_listen(const std::string& text, Options& options) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::invalid_argument("--listen wants HOST:PORT, got '" + text + "'");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = text.substr(colon + 1);
  char* end = nullptr;
  const long value = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || value < 0 || value > 65535)
    throw std::invalid_argument("--listen: '" + port + "' is not a port number (0-65535)");
  options.host = host;
  options.port = static_cast<int>(value);
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options options;
  if (const char* listen = std::getenv("PROCESSOR_LISTEN"); listen && *listen) parse_listen(listen, options);
  if (const char* db = std::getenv("PROCESSOR_DB_URL")) options.db_url = db;

  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::optional<std::string> attached;  // --flag=value
    if (const auto equals = flag.find('='); flag.rfind("--", 0) == 0 && equals != std::string::npos) {
      attached = flag.substr(equals + 1);
      flag.resize(equals);
    }
    const auto value = [&]() -> std::string {
      if (attached) return *attached;
      if (i + 1 == argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--listen") parse_listen(value(), options);
    else if (flag == "--db") options.db_url = value();
    else if (flag == "--allow-remote") options.allow_remote = true;
    else if (flag == "--help" || flag == "-h") options.help = true;
    else throw std::invalid_argument("unknown argument '" + flag + "'");
  }
  if (options.help) return options;
  if (options.db_url.empty()) throw std::invalid_argument("--db (or PROCESSOR_DB_URL) is required");
  if (!options.allow_remote && !is_loopback(options.host))
    throw std::invalid_argument("--listen " + options.host +
                                " is not a loopback address; pass --allow-remote to serve it anyway");
  return options;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

std::string base_url(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return "http://" + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace processor
