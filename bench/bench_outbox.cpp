// Outbox benchmarks that need a program rather than pgbench (scripts/bench-outbox.sh):
//   latency  one writer commits business write + event at --rate per second for --seconds; one
//            consumer (idem::OutboxConsumer, LISTEN) measures commit -> claim by the server clock.
//            --peer: the same against the hand-written queue (LISTEN, DELETE ... SKIP LOCKED).
//   idle     one consumer with nothing to do for --seconds; prints the queries it sent per second
//            (--listen 0: a pooler without LISTEN). --peer: a hand-written poller (--peer-poll-ms).
// Prints one line "key value ..." that the script reads.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "idem/outbox_consumer.hpp"

namespace {

struct Args {
  std::string url;
  std::string mode = "latency";
  double rate = 350;
  int seconds = 20;
  bool listen = true;
  bool peer = false;
  int peer_poll_ms = 1000;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--url") a.url = v;
    else if (k == "--mode") a.mode = v;
    else if (k == "--rate") a.rate = std::atof(v.c_str());
    else if (k == "--seconds") a.seconds = std::atoi(v.c_str());
    else if (k == "--listen") a.listen = v != "0";
    else if (k == "--peer") a.peer = v != "0";
    else if (k == "--peer-poll-ms") a.peer_poll_ms = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  if (a.url.empty()) {
    std::fprintf(stderr, "usage: bench_outbox --url URL [--mode latency|idle] [--rate N] [--seconds N] [--listen 0|1] [--peer 0|1]\n");
    std::exit(2);
  }
  return a;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t i = static_cast<std::size_t>(p * static_cast<double>(v.size()));
  if (i >= v.size()) i = v.size() - 1;
  return v[i];
}

// Commits one business write and its event (or peer row) every 1/rate seconds until `stop`.
void write_at_rate(const Args& a, std::atomic<bool>& stop, std::atomic<long>& written) {
  pqxx::connection c(a.url);
  const auto period = std::chrono::duration<double>(1.0 / a.rate);
  auto next = std::chrono::steady_clock::now();
  long n = 0;
  while (!stop) {
    std::this_thread::sleep_until(next);
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
    const std::string id = "lat-" + std::to_string(n++) + "-" + std::to_string(std::rand());
    pqxx::work w(c);
    w.exec_params("INSERT INTO ob_orders (order_id, tenant_id, amount, payload) VALUES ($1, 't1', 100, '{}')", id);
    if (a.peer) {
      w.exec_params("INSERT INTO peer_queue (tenant_id, topic, key, payload) VALUES ('t1', 'order.intent', $1, '{}')", id);
    } else {
      w.exec_params("SELECT idem.emit('t1', 'order.intent', jsonb_build_object('order', $1::text), $1)", id);
    }
    w.commit();
    ++written;
  }
}

class PeerWakeup final : public pqxx::notification_receiver {
 public:
  PeerWakeup(pqxx::connection_base& c, bool& flag) : pqxx::notification_receiver(c, "peer_queue"), flag_(flag) {}
  void operator()(const std::string&, int) override { flag_ = true; }

 private:
  bool& flag_;
};

int latency(const Args& a) {
  std::atomic<bool> stop{false};           // the writer
  std::atomic<bool> stop_consumer{false};  // after the writer, once what it committed is drained
  std::atomic<long> written{0};
  std::vector<double> ages;
  std::mutex ages_mutex;
  std::thread consumer;
  std::unique_ptr<idem::OutboxConsumer> ours;
  if (a.peer) {
    consumer = std::thread([&] {
      pqxx::connection c(a.url);
      bool notified = false;
      PeerWakeup wakeup(c, notified);
      while (!stop_consumer) {
        notified = false;  // before the read: a notification during it means there may be more
        pqxx::work w(c);
        const pqxx::result r = w.exec(
            "WITH c AS (SELECT id FROM peer_queue ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED),"
            " d AS (DELETE FROM peer_queue p USING c WHERE p.id = c.id RETURNING p.created_at)"
            " SELECT extract(epoch FROM clock_timestamp() - created_at) FROM d");
        w.commit();
        {
          std::lock_guard<std::mutex> lock(ages_mutex);
          for (const auto& row : r) ages.push_back(row[0].as<double>());
        }
        if (r.empty()) {
          for (int i = 0; i < 50 && !notified && !stop_consumer; ++i) c.await_notification(0, 100000);
        }
      }
    });
  } else {
    idem::OutboxConsumerOptions o;
    o.consumer = "bench";
    o.batch = 100;
    o.listen = a.listen;
    ours = std::make_unique<idem::OutboxConsumer>(a.url, o);
    consumer = std::thread([&] {
      ours->run([&](idem::SqlTransaction&, const idem::OutboxEvent& e) {
        std::lock_guard<std::mutex> lock(ages_mutex);
        ages.push_back(e.commit_age_seconds);
      });
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the consumer is listening
  std::thread writer([&] { write_at_rate(a, stop, written); });
  std::this_thread::sleep_for(std::chrono::seconds(a.seconds));
  stop = true;
  writer.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // drain what is committed
  stop_consumer = true;
  if (ours) ours->stop();
  consumer.join();
  std::lock_guard<std::mutex> lock(ages_mutex);
  std::printf("written %ld received %zu p50_ms %.2f p90_ms %.2f p99_ms %.2f max_ms %.2f\n", written.load(), ages.size(),
              percentile(ages, 0.50) * 1000, percentile(ages, 0.90) * 1000, percentile(ages, 0.99) * 1000,
              percentile(ages, 1.0) * 1000);
  return written.load() == static_cast<long>(ages.size()) ? 0 : 1;
}

int idle(const Args& a) {
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t queries = 0;
  if (a.peer) {
    pqxx::connection c(a.url);
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(a.seconds)) {
      pqxx::work w(c);
      w.exec("SELECT id FROM peer_queue ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED");
      w.commit();
      ++queries;
      std::this_thread::sleep_for(std::chrono::milliseconds(a.peer_poll_ms));
    }
  } else {
    idem::OutboxConsumerOptions o;
    o.consumer = "bench";
    o.listen = a.listen;
    idem::OutboxConsumer consumer(a.url, o);
    std::thread t([&] { consumer.run([](idem::SqlTransaction&, const idem::OutboxEvent&) {}); });
    std::this_thread::sleep_for(std::chrono::seconds(a.seconds));
    consumer.stop();
    t.join();
    queries = consumer.stats().claims;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("queries %llu seconds %.1f per_second %.3f\n", static_cast<unsigned long long>(queries), secs,
              static_cast<double>(queries) / secs);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    if (a.mode == "latency") return latency(a);
    if (a.mode == "idle") return idle(a);
    std::fprintf(stderr, "unknown mode %s\n", a.mode.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_outbox: %s\n", e.what());
    return 1;
  }
}
