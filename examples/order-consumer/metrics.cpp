#include "metrics.hpp"

#include <prometheus/text_serializer.h>

#include <cstdio>

#include "counter_totals.hpp"

namespace order_consumer {
namespace {

idem::ClientOptions one_connection() {
  idem::ClientOptions o;
  o.pool_size = 1;
  return o;
}

prometheus::Counter& counter(prometheus::Registry& registry, const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({});
}

prometheus::Gauge& gauge(prometheus::Registry& registry, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

}  // namespace

Metrics::Metrics(const std::string& db_url, std::string consumer)
    : consumer_(std::move(consumer)),
      db_(db_url, one_connection()),
      registry_(std::make_shared<prometheus::Registry>()),
      applied_(counter(*registry_, "order_consumer_events_applied_total", "Events whose effect committed (consume_once true)")),
      redeliveries_(counter(*registry_, "order_consumer_redeliveries_skipped_total",
                            "Events handed out again and skipped: consume_once said they were applied before")),
      failed_(counter(*registry_, "order_consumer_events_failed_total", "Events whose handler failed (nacked)")),
      lost_claims_(counter(*registry_, "order_consumer_claims_lost_total", "Claims taken over before this worker committed")),
      errors_(counter(*registry_, "order_consumer_poll_errors_total", "Other failures of a poll (logged; the worker goes on)")),
      backlog_(gauge(*registry_, "order_consumer_backlog_events", "Events committed and not yet acked by this consumer")),
      oldest_age_(gauge(*registry_, "order_consumer_oldest_unacked_age_seconds",
                        "Age of the oldest committed event not yet acked (0 when none)")) {}

std::string Metrics::scrape(const idem::OutboxConsumerStats& stats) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    using demo_common::catch_up;
    catch_up(applied_, stats.applied, seen_.applied);
    catch_up(redeliveries_, stats.skipped_redeliveries, seen_.skipped_redeliveries);
    catch_up(failed_, stats.failed, seen_.failed);
    catch_up(lost_claims_, stats.lost_claims, seen_.lost_claims);
    catch_up(errors_, stats.errors, seen_.errors);
    seen_ = stats;
    try {
      const auto rows = db_.query(
          "SELECT coalesce(sum(backlog), 0)::text, coalesce(extract(epoch FROM max(oldest_unacked_age)), 0)::text"
          " FROM idem.outbox_lag WHERE consumer = $1",
          {consumer_});
      backlog_.Set(std::stod(rows.at(0).at(0).value()));
      oldest_age_.Set(std::stod(rows.at(0).at(1).value()));
    } catch (const std::exception& e) {
      // The lag is left as last read; the counters above are still this process's own.
      std::fprintf(stderr, "order-consumer: metrics: reading outbox_lag: %s\n", e.what());
    }
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace order_consumer
