// crash-workload: the client side of the crash loop (scripts/crash.sh, docs/reliability.md).
//   crash-workload --url URI --setup                      create the business table
//   crash-workload --url URI --log FILE [--threads 8] [--pool 64] [--slide-one-in 4] [--lease-ms 2000]
//                  [--seed N] [--run-id ID] [--resolve-seconds 90]
//                                                         the load, driven by commands on stdin
//   crash-workload --url URI --hold-and-die KEY [--lease-ms 1000]
//                                                         begin KEY, checkpoint "charged", _exit
//   crash-workload --subreaper CMD [ARGS...]              run CMD as a child subreaper (subreaper.hpp)
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "commands.hpp"
#include "hold_and_die.hpp"
#include "orders.hpp"
#include "subreaper.hpp"

namespace {

int usage(const std::string& why) {
  std::fprintf(stderr,
               "crash-workload: %s\n"
               "usage: crash-workload --url URI --setup\n"
               "       crash-workload --url URI --log FILE [--threads N] [--pool N] [--slide-one-in N] [--lease-ms MS]"
               " [--seed N] [--run-id ID] [--resolve-seconds S]\n"
               "       crash-workload --url URI --hold-and-die KEY [--lease-ms MS]\n"
               "       crash-workload --subreaper CMD [ARGS...]\n",
               why.c_str());
  return 2;
}

std::string random_run_id() {
  std::random_device device;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(device()));
  return buf;
}

int setup(const std::string& url) {
  idem::ClientOptions options;
  options.allow_missing_key = true;  // DDL, not a keyed mutation
  idem::Client client(url, options);
  client.run(idem::Request{crash::kTenant, "crash-setup", "POST", "/setup", std::nullopt, "", {}, "create"},
             [](idem::Attempt& a) {
               for (const auto& sql : crash::create_table_sql()) a.exec(sql);
               return idem::Response{};
             });
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--subreaper") return crash::exec_as_subreaper(argv + 2);
  crash::WorkloadConfig config;
  bool do_setup = false;
  std::string hold_key;
  std::optional<long> lease_ms;
  bool seeded = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
        return argv[++i];
      };
      if (arg == "--url") config.url = value();
      else if (arg == "--setup") do_setup = true;
      else if (arg == "--log") config.ledger_path = value();
      else if (arg == "--threads") config.shape.threads = std::stoi(value());
      else if (arg == "--pool") config.shape.pool = std::stoi(value());
      else if (arg == "--slide-one-in") config.shape.slide_one_in = std::stoi(value());
      else if (arg == "--lease-ms") lease_ms = std::stol(value());
      else if (arg == "--seed") config.shape.seed = std::stoull(value()), seeded = true;
      else if (arg == "--run-id") config.run_id = value();
      else if (arg == "--resolve-seconds") config.resolve_deadline = std::chrono::seconds(std::stol(value()));
      else if (arg == "--hold-and-die") hold_key = value();
      else return usage("unknown argument " + arg);
    }
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  if (config.url.empty()) return usage("--url is required");
  try {
    if (do_setup) return setup(config.url);
    if (!hold_key.empty()) {
      return crash::hold_and_die(config.url, hold_key, std::chrono::milliseconds(lease_ms.value_or(1000)));
    }
    if (config.ledger_path.empty()) return usage("--log is required for the load");
    if (config.shape.threads < 1 || config.shape.pool < 1 || config.shape.slide_one_in < 1) {
      return usage("--threads, --pool and --slide-one-in must be positive");
    }
    if (lease_ms) config.lease = std::chrono::milliseconds(*lease_ms);
    if (config.run_id.empty()) config.run_id = random_run_id();
    if (!seeded) config.shape.seed = std::random_device{}();
    std::fprintf(stderr, "crash-workload: run %s, seed %llu\n", config.run_id.c_str(),
                 static_cast<unsigned long long>(config.shape.seed));
    return crash::serve_commands(config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "crash-workload: %s\n", e.what());
    return 1;
  }
}
