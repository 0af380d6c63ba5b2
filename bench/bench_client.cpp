// idem::Client::run under load (scripts/bench.sh): requests per second and p50/p99 latency of run
// for new keys and for replays at --threads threads, beside the same business write done without
// idempotency twice: through libpqxx alone (pqxx::work: BEGIN; INSERT; COMMIT) and through the
// same client sent the same way (run without a key, allow_missing_key), with the round trips per
// request counted by the client ("-" for libpqxx alone, which the client does not see).
// Prints one line per workload: "workload threads rps p50_ms p99_ms rt/req".
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "idem/client.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Result {
  double rps = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  long requests = 0;
};

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t i = static_cast<std::size_t>(p * static_cast<double>(v.size()));
  return v[std::min(i, v.size() - 1)];
}

// Runs `one(thread, n)` on each thread for `seconds`; latencies in ms.
template <typename One>
Result drive(int threads, int seconds, One one) {
  std::vector<std::vector<double>> lat(static_cast<std::size_t>(threads));
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  const auto start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      long n = 0;
      while (!stop) {
        const auto a = Clock::now();
        one(t, n++);
        lat[static_cast<std::size_t>(t)].push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  Result r;
  r.requests = static_cast<long>(all.size());
  r.rps = static_cast<double>(all.size()) / secs;
  r.p50_ms = percentile(all, 0.50);
  r.p99_ms = percentile(all, 0.99);
  return r;
}

std::string body(int t, long n) {
  return "{\"cart\":\"cart_" + std::to_string(t) + "_" + std::to_string(n) + "\",\"amount_cents\":1999}";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: bench_client URL THREADS SECONDS\n");
    return 2;
  }
  const std::string url = argv[1];
  const int threads = std::atoi(argv[2]);
  const int seconds = std::atoi(argv[3]);
  try {
    {
      pqxx::connection c(url);
      pqxx::work w(c);
      w.exec("CREATE TABLE IF NOT EXISTS client_orders (id text PRIMARY KEY, amount integer NOT NULL)");
      w.exec("TRUNCATE client_orders");
      w.exec("TRUNCATE idem.keys");
      w.commit();
    }
    // The bare write, one connection per thread.
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    for (int t = 0; t < threads; ++t) conns.push_back(std::make_unique<pqxx::connection>(url));
    const Result bare = drive(threads, seconds, [&](int t, long n) {
      pqxx::work w(*conns[static_cast<std::size_t>(t)]);
      w.exec_params("INSERT INTO client_orders VALUES ($1, 1999)", "bare-" + std::to_string(t) + "-" + std::to_string(n));
      w.commit();
    });
    conns.clear();

    idem::ClientOptions options;
    options.pool_size = static_cast<std::size_t>(threads);
    idem::Client client(url, options);
    auto request = [](int t, long n, const std::string& prefix) {
      idem::Request r;
      r.tenant = "acme";
      r.caller = "checkout";
      r.method = "POST";
      r.route = "/v1/orders";
      r.idempotency_key = prefix + std::to_string(t) + "-" + std::to_string(n) + "-0000000000000000";
      r.body = body(t, n);
      return r;
    };
    const auto handler = [](idem::Attempt& a) {
      a.exec("INSERT INTO client_orders VALUES (gen_random_uuid()::text, 1999)");
      idem::Response resp;
      resp.status = 201;
      resp.body = "{\"ok\":true}";
      return resp;
    };
    // The same business transaction through the same client without a key (allow_missing_key).
    idem::ClientOptions unguarded_options = options;
    unguarded_options.allow_missing_key = true;
    idem::Client unguarded_client(url, unguarded_options);
    const auto rtu0 = unguarded_client.stats().round_trips;
    const Result unguarded = drive(threads, seconds, [&](int t, long n) {
      idem::Request r = request(t, n, "none-");
      r.idempotency_key.reset();
      if (unguarded_client.run(r, handler).status != 201) std::abort();
    });
    const auto rtu1 = unguarded_client.stats().round_trips;
    const auto rt0 = client.stats().round_trips;
    std::vector<long> made(static_cast<std::size_t>(threads), 0);
    const Result fresh = drive(threads, seconds, [&](int t, long n) {
      const idem::Response r = client.run(request(t, n, "new-"), handler);
      if (r.status != 201 || r.header("Idempotent-Replayed") != nullptr) std::abort();
      made[static_cast<std::size_t>(t)] = n + 1;
    });
    const auto rt1 = client.stats().round_trips;
    // Replays of the keys just resolved, same bodies.
    const Result replay = drive(threads, seconds, [&](int t, long n) {
      const idem::Response r = client.run(request(t, n % made[static_cast<std::size_t>(t)], "new-"), handler);
      if (r.status != 201 || r.header("Idempotent-Replayed") == nullptr) std::abort();
    });
    const auto rt2 = client.stats().round_trips;
    std::printf("bare_libpqxx %d %.0f %.2f %.2f -\n", threads, bare.rps, bare.p50_ms, bare.p99_ms);
    std::printf("run_without_key %d %.0f %.2f %.2f %.2f\n", threads, unguarded.rps, unguarded.p50_ms, unguarded.p99_ms,
                static_cast<double>(rtu1 - rtu0) / static_cast<double>(unguarded.requests));
    std::printf("run_new_key %d %.0f %.2f %.2f %.2f\n", threads, fresh.rps, fresh.p50_ms, fresh.p99_ms,
                static_cast<double>(rt1 - rt0) / static_cast<double>(fresh.requests));
    std::printf("run_replay %d %.0f %.2f %.2f %.2f\n", threads, replay.rps, replay.p50_ms, replay.p99_ms,
                static_cast<double>(rt2 - rt1) / static_cast<double>(replay.requests));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_client: %s\n", e.what());
    return 1;
  }
  return 0;
}
