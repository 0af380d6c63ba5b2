#include "metrics.hpp"

#include <prometheus/text_serializer.h>

#include <regex>

#include "counter_totals.hpp"

namespace checkout {
namespace {

const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};

prometheus::Family<prometheus::Counter>& counters(prometheus::Registry& registry, const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}


}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(counters(*registry_, "checkout_http_requests_total", "HTTP requests answered, by route and status")),
      latency_(prometheus::BuildHistogram()
                   .Name("checkout_http_request_duration_seconds")
                   .Help("Time to answer an HTTP request, by route")
                   .Register(*registry_)),
      replays_(counters(*registry_, "checkout_idempotent_replays_total",
                        "Responses replayed from the idempotency record (Idempotent-Replayed: true), by route")),
      conflicts_(counters(*registry_, "checkout_conflicts_total",
                          "409 answers (the key's request in progress, or a state machine refusal), by route")),
      processor_(counters(*registry_, "checkout_processor_calls_total",
                          "Calls to the payment processor, by operation and result (unavailable and timed_out are its faults)")),
      pool_waits_(counters(*registry_, "idem_client_pool_waits_total",
                           "Times a checkout of a database connection waited for one to be free")
                      .Add({})),
      pool_wait_seconds_(
          counters(*registry_, "idem_client_pool_wait_seconds_total", "Time spent waiting for a free database connection").Add({})),
      round_trips_(counters(*registry_, "idem_client_round_trips_total", "Exchanges with the database the client waited for").Add({})),
      connections_opened_(counters(*registry_, "idem_client_connections_opened_total", "Database connections the client opened").Add({})) {}

void Metrics::request(const std::string& route, int status, bool replayed, double seconds) {
  requests_.Add({{"route", route}, {"status", std::to_string(status)}}).Increment();
  latency_.Add({{"route", route}}, kLatencyBuckets).Observe(seconds);
  if (replayed) replays_.Add({{"route", route}}).Increment();
  if (status == 409) conflicts_.Add({{"route", route}}).Increment();
}

void Metrics::processor_call(const std::string& operation, const std::string& result) {
  processor_.Add({{"operation", operation}, {"result", result}}).Increment();
}

std::string Metrics::scrape(const idem::ClientStats& client) {
  {
    const std::lock_guard<std::mutex> lock(scrape_mutex_);
    using demo_common::catch_up;
    catch_up(pool_waits_, client.pool_waits, seen_.pool_waits);
    catch_up(pool_wait_seconds_, client.pool_wait_us, seen_.pool_wait_us, 1e-6);
    catch_up(round_trips_, client.round_trips, seen_.round_trips);
    catch_up(connections_opened_, client.connections_opened, seen_.connections_opened);
    seen_ = client;
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

std::string route_name(const std::string& path) {
  static const std::regex checkout(R"(^/checkout/[^/]+/complete$)");
  static const std::regex refund(R"(^/v1/payments/[^/]+/refunds$)");
  if (std::regex_match(path, checkout)) return "checkout";
  if (std::regex_match(path, refund)) return "refund";
  if (path == "/health") return "health";
  if (path == "/metrics") return "metrics";
  return "other";
}

}  // namespace checkout
