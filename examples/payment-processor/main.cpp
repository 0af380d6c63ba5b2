// payment-processor: the demo's stand-in for Stripe, in its own process and its own `processor`
// schema. See README.md here for the API; `--help` for the flags.
#include <httplib.h>
#include <pqxx/pqxx>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "connection_pool.hpp"
#include "options.hpp"
#include "routes.hpp"
#include "schema_sql.hpp"
#include "statements.hpp"

namespace processor {
namespace {

// Enough for the worker threads not to queue on the database; few enough for a shared server.
constexpr size_t kDatabaseConnections = 8;

void apply_schema(const std::string& db_url) {
  pqxx::connection connection(db_url);
  pqxx::work tx(connection);
  tx.exec(kSchemaSql);
  tx.commit();
}

// SIGINT/SIGTERM are blocked in every thread and taken here, where calling server.stop() is safe
// (it is not async-signal-safe, so not from a handler). Must run before any thread is started.
sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void stop_on_signal(httplib::Server& server, sigset_t signals, std::atomic<bool>& stopping) {
  int received = 0;
  sigwait(&signals, &received);
  stopping = true;
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  server.stop();
}

int run(const Options& options) {
  try {
    apply_schema(options.db_url);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "payment-processor: cannot create schema processor in %s: %s\n", options.db_url.c_str(),
                 e.what());
    return 1;
  }
  // A write to a caller that gave up (the timeout fault) must fail with EPIPE, not kill the process.
  signal(SIGPIPE, SIG_IGN);
  const sigset_t stop_signals = block_stop_signals();

  ConnectionPool pool(options.db_url, kDatabaseConnections, prepare_statements);
  FaultPlan faults;
  httplib::Server server;
  configure_server(server);
  const int port = options.port == 0 ? server.bind_to_any_port(options.host)
                                     : (server.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port < 0) {
    std::fprintf(stderr, "payment-processor: cannot listen on %s:%d (in use, or not an address of this machine)\n",
                 options.host.c_str(), options.port);
    return 1;
  }
  Context context{pool, faults, base_url(options.host, port)};
  add_payment_routes(server, context);
  add_control_routes(server, context);

  std::atomic<bool> stopping{false};
  std::thread(stop_on_signal, std::ref(server), stop_signals, std::ref(stopping)).detach();
  std::printf("payment-processor listening on %s\n", context.base_url.c_str());
  std::fflush(stdout);
  server.listen_after_bind();  // returns once stop() has run and the workers have finished
  if (!stopping) {
    std::fprintf(stderr, "payment-processor: the server stopped unexpectedly\n");
    return 1;
  }
  std::fprintf(stderr, "payment-processor: stopped\n");
  return 0;
}

}  // namespace
}  // namespace processor

int main(int argc, char** argv) {
  processor::Options options;
  try {
    options = processor::parse_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "payment-processor: %s\n%s", e.what(), processor::kUsage);
    return 2;
  }
  if (options.help) {
    std::fputs(processor::kUsage, stdout);
    return 0;
  }
  return processor::run(options);
}
