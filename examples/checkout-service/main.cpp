// checkout-service: the demo's HTTP service (README.md beside this file).
//   checkout-service --listen 127.0.0.1:7400 --db <libpq URI> --processor http://127.0.0.1:7401
//                    --token-secret <secret> [--lease-ms 3000] [--processor-timeout-ms 2000] [--faults]
//                    [--citus]
//   checkout-service --mint-token <tenant> <caller> --token-secret <secret>
#include <httplib.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "auth.hpp"
#include "listening_socket.hpp"
#include "service.hpp"

namespace {

int usage(const char* why) {
  std::fprintf(stderr,
               "checkout-service: %s\n"
               "usage: checkout-service --db URI --token-secret S [--listen 127.0.0.1:7400]\n"
               "         [--processor http://127.0.0.1:7401] [--lease-ms 3000] [--processor-timeout-ms 2000] [--faults]\n"
               "         [--citus]   (the database is a Citus coordinator: docs/citus.md)\n"
               "       checkout-service --mint-token TENANT CALLER --token-secret S\n",
               why);
  return 2;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

bool loopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

}  // namespace

int main(int argc, char** argv) {
  checkout::ServiceConfig config;
  config.listen = env_or("CHECKOUT_LISTEN", config.listen);
  config.db_url = env_or("CHECKOUT_DB_URL", "");
  config.processor_url = env_or("CHECKOUT_PROCESSOR_URL", config.processor_url);
  config.token_secret = env_or("CHECKOUT_TOKEN_SECRET", "");
  bool allow_remote = false;
  std::string mint_tenant, mint_caller;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(usage((arg + " needs a value").c_str()));
      return argv[++i];
    };
    if (arg == "--listen") config.listen = value();
    else if (arg == "--db") config.db_url = value();
    else if (arg == "--processor") config.processor_url = value();
    else if (arg == "--token-secret") config.token_secret = value();
    else if (arg == "--lease-ms") config.lease = std::chrono::milliseconds(std::stol(value()));
    else if (arg == "--processor-timeout-ms") config.processor_timeout = std::chrono::milliseconds(std::stol(value()));
    else if (arg == "--faults") config.faults = true;
    else if (arg == "--citus") config.citus = true;
    else if (arg == "--allow-remote") allow_remote = true;
    else if (arg == "--mint-token") {
      mint_tenant = value();
      mint_caller = value();
    } else return usage(("unknown argument " + arg).c_str());
  }
  if (config.token_secret.empty()) return usage("--token-secret (or CHECKOUT_TOKEN_SECRET) is required");
  if (!mint_tenant.empty()) {
    try {
      std::printf("%s\n", checkout::mint_token(config.token_secret, mint_tenant, mint_caller).c_str());
    } catch (const std::invalid_argument& e) {
      return usage(e.what());
    }
    return 0;
  }
  if (config.db_url.empty()) return usage("--db (or CHECKOUT_DB_URL) is required");
  // A lease that ends while the processor may still answer lets a retry take the key over from a
  // holder that is only slow: safe (the holder is fenced), but the key never settles.
  if (config.lease <= config.processor_timeout + std::chrono::milliseconds(500)) {
    std::fprintf(stderr, "checkout-service: warning: --lease-ms %lld does not exceed --processor-timeout-ms %lld by 500 ms:"
                 " retries may take keys over from slow holders (safe, but slow to settle)\n",
                 static_cast<long long>(config.lease.count()), static_cast<long long>(config.processor_timeout.count()));
  }
  const auto colon = config.listen.rfind(':');
  if (colon == std::string::npos) return usage("--listen must be host:port");
  const std::string host = config.listen.substr(0, colon);
  const int port = std::atoi(config.listen.c_str() + colon + 1);
  if (!loopback(host) && !allow_remote) return usage("refusing a non-loopback --listen without --allow-remote");

  // SIGTERM/SIGINT stop the server from a thread of their own (stop() is not signal-safe).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  try {
    checkout::Service service(config);
    httplib::Server server;
    service.route(server);
    // Enough workers for a burst of duplicates (each waits at most acquire_timeout for a connection).
    server.new_task_queue = [] { return new httplib::ThreadPool(32); };
    if (!demo_common::port_is_free(host.c_str(), port) || !server.bind_to_port(host.c_str(), port)) {
      std::fprintf(stderr, "checkout-service: cannot listen on %s (in use?)\n", config.listen.c_str());
      return 1;
    }
    demo_common::widen_listen_backlog(port);
    std::thread stopper([&] {
      int sig = 0;
      sigwait(&stop_signals, &sig);
      server.stop();
    });
    stopper.detach();
    std::printf("checkout-service listening on http://%s\n", config.listen.c_str());
    std::fflush(stdout);
    server.listen_after_bind();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkout-service: %s\n", e.what());
    return 1;
  }
  return 0;
}
