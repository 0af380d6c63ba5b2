// The order consumer's /metrics (Prometheus' text format): events applied, redeliveries skipped,
// events failed (nacked), claims lost, poll errors, from OutboxConsumer::stats(); and the
// consumer's lag, read from idem.outbox_lag at each scrape.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <memory>
#include <mutex>
#include <string>

#include "idem/client.hpp"
#include "idem/outbox_consumer.hpp"

namespace order_consumer {

class Metrics {
 public:
  // db_url: where outbox_lag is read (a connection of its own, opened at the first scrape).
  Metrics(const std::string& db_url, std::string consumer);
  std::string scrape(const idem::OutboxConsumerStats& stats);

 private:
  std::string consumer_;
  idem::Client db_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter& applied_;
  prometheus::Counter& redeliveries_;
  prometheus::Counter& failed_;
  prometheus::Counter& lost_claims_;
  prometheus::Counter& errors_;
  prometheus::Gauge& backlog_;
  prometheus::Gauge& oldest_age_;
  std::mutex mutex_;
  idem::OutboxConsumerStats seen_;
};

}  // namespace order_consumer
