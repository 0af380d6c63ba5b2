// order-consumer: the sync plane (reference §4.2). Claims order_intent events from the outbox and,
// in one transaction per event, records the order in sync_orders exactly once (consume_once in
// idem::OutboxConsumer), appends its audit row (sync_order_mutations) and emits order.created.
//   order-consumer --db <libpq URI> [--batch 50] [--apply-delay-ms 0] [--citus] [--metrics 127.0.0.1:7402]
// --apply-delay-ms slows every event down, so the demo can kill the consumer mid-batch.
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "idem/outbox_consumer.hpp"
#include "metrics.hpp"

namespace {

void record(idem::SqlTransaction& tx, const idem::OutboxEvent& e, std::chrono::milliseconds delay) {
  const nlohmann::json p = nlohmann::json::parse(e.payload);
  if (delay.count() > 0) std::this_thread::sleep_for(delay);
  const std::string order_id = p.at("order_id").get<std::string>();
  tx.exec(
      "INSERT INTO sync_orders (order_id, tenant_id, idempotency_key, payment_id, charge_id, amount_cents, currency,"
      " event_id) VALUES ($1, $2, $3, $4::uuid, $5, $6, $7, $8)",
      {order_id, e.tenant_id, p.at("idempotency_key").get<std::string>(), p.at("payment_id").get<std::string>(),
       p.at("charge_id").get<std::string>(), std::to_string(p.at("amount_cents").get<long>()),
       p.at("currency").get<std::string>(), std::to_string(e.event_id)});
  tx.exec(
      "INSERT INTO sync_order_mutations (order_id, tenant_id, idempotency_key, event_id, attempt, handler_response)"
      " VALUES ($1, $2, $3, $4, $5, $6::jsonb)",
      {order_id, e.tenant_id, p.at("idempotency_key").get<std::string>(), std::to_string(e.event_id),
       std::to_string(e.attempt), nlohmann::json{{"charge_id", p.at("charge_id")}}.dump()});
  tx.exec("SELECT idem.emit($1, 'order.created', $2::jsonb, $3)",
          {e.tenant_id, nlohmann::json{{"order_id", order_id}, {"event_id", e.event_id}}.dump(), order_id});
}

}  // namespace

int main(int argc, char** argv) {
  std::string db_url = std::getenv("CONSUMER_DB_URL") ? std::getenv("CONSUMER_DB_URL") : "";
  int batch = 50;
  std::chrono::milliseconds delay{0};
  bool citus = false;  // the database is a Citus coordinator: claim tenant by tenant (docs/citus.md)
  std::string metrics_listen;  // host:port of GET /metrics, none when empty
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--citus") {
      citus = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "order-consumer: %s needs a value\n", arg.c_str());
      return 2;
    }
    const std::string value = argv[++i];
    if (arg == "--db") db_url = value;
    else if (arg == "--metrics") metrics_listen = value;
    else if (arg == "--batch") batch = std::stoi(value);
    else if (arg == "--apply-delay-ms") delay = std::chrono::milliseconds(std::stol(value));
    else {
      std::fprintf(stderr, "usage: order-consumer --db URI [--batch 50] [--apply-delay-ms 0] [--citus] [--metrics HOST:PORT]\n");
      return 2;
    }
  }
  if (db_url.empty()) {
    std::fprintf(stderr, "order-consumer: --db (or CONSUMER_DB_URL) is required\n");
    return 2;
  }
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  idem::OutboxConsumerOptions options;
  options.consumer = "sync_plane";
  options.topics = {"order_intent"};
  options.batch = batch;
  options.idle_poll = std::chrono::milliseconds(1000);
  options.citus = citus;
  idem::OutboxConsumer consumer(db_url, options);
  // GET /metrics on a server of its own, on loopback only.
  std::unique_ptr<order_consumer::Metrics> metrics;
  httplib::Server metrics_server;
  std::thread metrics_thread;
  if (!metrics_listen.empty()) {
    const auto colon = metrics_listen.rfind(':');
    const std::string host = colon == std::string::npos ? "" : metrics_listen.substr(0, colon);
    if (host != "127.0.0.1" && host != "localhost" && host != "::1") {
      std::fprintf(stderr, "order-consumer: --metrics must be a loopback host:port, got %s\n", metrics_listen.c_str());
      return 2;
    }
    metrics = std::make_unique<order_consumer::Metrics>(db_url, options.consumer);
    metrics_server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics->scrape(consumer.stats()), "text/plain; version=0.0.4; charset=utf-8");
    });
    if (!metrics_server.bind_to_port(host.c_str(), std::atoi(metrics_listen.c_str() + colon + 1))) {
      std::fprintf(stderr, "order-consumer: cannot listen on %s (in use?)\n", metrics_listen.c_str());
      return 1;
    }
    metrics_thread = std::thread([&] { metrics_server.listen_after_bind(); });
  }
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    consumer.stop();
    metrics_server.stop();
  });
  stopper.detach();
  std::printf("order-consumer claiming order_intent as sync_plane\n");
  std::fflush(stdout);
  consumer.run([&](idem::SqlTransaction& tx, const idem::OutboxEvent& e) { record(tx, e, delay); });
  metrics_server.stop();
  if (metrics_thread.joinable()) metrics_thread.join();
  const auto s = consumer.stats();
  std::printf("order-consumer stopped: applied=%llu redeliveries_skipped=%llu failed=%llu\n",
              static_cast<unsigned long long>(s.applied), static_cast<unsigned long long>(s.skipped_redeliveries),
              static_cast<unsigned long long>(s.failed));
  return 0;
}
