// The service's /metrics (Prometheus' text exposition format, prometheus-cpp's core): requests by
// route and status, their latency, replays, 409s, the processor's calls by result (its faults
// among them), and the idem::Client's pool and round trips, read at each scrape.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <mutex>
#include <string>

#include "idem/client.hpp"

namespace checkout {

class Metrics {
 public:
  Metrics();
  // One answered request: `route` is the route's name (checkout, refund, health, metrics, other),
  // never the raw path, so that the labels stay few.
  void request(const std::string& route, int status, bool replayed, double seconds);
  // One call to the processor: `operation` its method and path ("POST /v1/charges"), `result`
  // done, refused, unavailable or timed_out.
  void processor_call(const std::string& operation, const std::string& result);
  // The exposition of everything, the client's counters brought up to date first.
  std::string scrape(const idem::ClientStats& client);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Counter>& replays_;
  prometheus::Family<prometheus::Counter>& conflicts_;
  prometheus::Family<prometheus::Counter>& processor_;
  prometheus::Counter& pool_waits_;
  prometheus::Counter& pool_wait_seconds_;
  prometheus::Counter& round_trips_;
  prometheus::Counter& connections_opened_;
  std::mutex scrape_mutex_;  // the client's totals are turned into increments, one scrape at a time
  idem::ClientStats seen_;
};

// The route name of a request path, as Metrics::request wants it.
std::string route_name(const std::string& path);

}  // namespace checkout
