// idem::Client with ClientOptions::citus through a Citus coordinator (tests/citus/citus_test.sh
// runs it): run() in one transaction on the tenant's node and its replay, and a Lease's
// checkpoint, release, resumption and complete, for a tenant given on the command line. Without
// the option, the handle forms would be refused (ERR_TENANT_NOT_LOCAL), which it checks too.
// Then idem::OutboxConsumer with OutboxConsumerOptions::citus: the events of two tenants (on
// both workers), claimed per tenant and applied once, and a wait woken by a worker's NOTIFY.
// usage: client_citus URL TENANT OTHER_TENANT   (a database citus_test.sh distributed, with table
// orders, topic client.citus and its consumer client-citus)
#include <chrono>
#include <ctime>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <variant>

#include "idem/client.hpp"
#include "idem/outbox_consumer.hpp"
#include "tests/citus/checks.hpp"

namespace {

using citus_checks::check;
using citus_checks::request;

std::string header(const idem::Response& r, const char* name) {
  const std::string* v = r.header(name);
  return v == nullptr ? "" : *v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " URL TENANT OTHER_TENANT\n";
    return 2;
  }
  const std::string url = argv[1], tenant = argv[2], other_tenant = argv[3];
  const std::string stamp = std::to_string(std::time(nullptr));
  idem::ClientOptions options;
  options.citus = true;
  options.pool_size = 2;
  idem::Client client(url, options);

  int runs = 0;
  const auto create_order = [&](idem::Attempt& a) {
    ++runs;
    a.exec("INSERT INTO orders VALUES ($1, $2, 1999)", {a.request().tenant, "order-" + *a.request().idempotency_key});
    a.emit("order.created", R"({"order":"client-order"})");
    idem::Response r;
    r.status = 201;
    r.body = R"({"order":"client-order-)" + stamp + R"("})";
    return r;
  };
  const std::string key = "client-citus-run-" + stamp;
  const idem::Response first = client.run(request(tenant, key, R"({"amount_cents":1999})"), create_order);
  const idem::Response again = client.run(request(tenant, key, R"({"amount_cents":1999})"), create_order);
  check("run(): 201 through the coordinator", "201", std::to_string(first.status));
  check("run() again: the same bytes, replayed", first.body + " true", again.body + " " + header(again, "Idempotent-Replayed"));
  check("the handler ran once", "1", std::to_string(runs));
  const idem::Response other = client.run(request(tenant, key, R"({"amount_cents":5})"), create_order);
  check("another body under the key: 422", "422", std::to_string(other.status));

  // A Lease: checkpoint, release, resume at the checkpoint, complete.
  const std::string lease_key = "client-citus-lease-" + stamp;
  auto begun = client.begin(request(tenant, lease_key, R"({"capture":1})"));
  if (!std::holds_alternative<idem::Lease>(begun)) {
    check("begin() leases the key", "a lease", "a response");
    return 1;
  }
  std::get<idem::Lease>(begun).checkpoint("charge_created", R"({"charge":"ch_1"})");
  std::get<idem::Lease>(begun).release("processor timeout");
  auto resumed = client.begin(request(tenant, lease_key, R"({"capture":1})"));
  const bool leased = std::holds_alternative<idem::Lease>(resumed);
  check("begin() after the release resumes at the checkpoint", "true charge_created",
        leased ? std::string(std::get<idem::Lease>(resumed).resumed() ? "true " : "false ") +
                     std::get<idem::Lease>(resumed).recovery_point().value_or("")
               : "a response");
  if (leased) {
    idem::Response done;
    done.status = 200;
    done.body = "captured";
    std::get<idem::Lease>(resumed).complete(done);
  }
  auto replay = client.begin(request(tenant, lease_key, R"({"capture":1})"));
  check("the completed lease replays", "captured",
        std::holds_alternative<idem::Response>(replay) ? std::get<idem::Response>(replay).body : "a lease");

  // Without the option the handle forms run on the coordinator: refused, nothing recorded.
  idem::ClientOptions plain_options;
  plain_options.pool_size = 1;
  idem::Client plain(url, plain_options);
  std::string refused;
  try {
    plain.run(request(tenant, "client-citus-plain-" + stamp, "{}"), create_order);
  } catch (const idem::ClientError& e) {
    refused = e.name();
  }
  check("without ClientOptions::citus, complete(handle, ...) is refused", "ERR_TENANT_NOT_LOCAL", refused);

  // The outbox consumer: two events of one tenant and one of the other, each tenant's on its worker.
  const auto emit = [&](const std::string& t, const std::string& key, const std::string& order) {
    citus_checks::emit(client, "client.citus", t, key, R"({"order":")" + order + R"("})");
  };
  emit(tenant, "client-citus-emit-1-" + stamp, "a1");
  emit(tenant, "client-citus-emit-2-" + stamp, "a2");
  emit(other_tenant, "client-citus-emit-3-" + stamp, "b1");
  idem::OutboxConsumerOptions consumer_options;
  consumer_options.consumer = "client-citus";
  consumer_options.citus = true;
  consumer_options.idle_poll = std::chrono::milliseconds(5000);
  idem::OutboxConsumer consumer(url, consumer_options);
  std::map<std::string, std::string> applied;  // tenant -> its orders in the order applied
  const auto handler = [&](idem::SqlTransaction& tx, const idem::OutboxEvent& e) {
    tx.exec("INSERT INTO orders VALUES ($1, $2, 1)", {e.tenant_id, "consumed-" + std::to_string(e.event_id)});
    const std::size_t value = e.payload.find('"', e.payload.find(':'));  // {"order": "a1"}
    const std::string order = e.payload.substr(value + 1, 2);
    applied[e.tenant_id] += (applied[e.tenant_id].empty() ? "" : ",") + order;
  };
  check("OutboxConsumer (citus): one poll hands out both tenants' events", "3", std::to_string(consumer.poll_once(handler)));
  check("... each tenant's in commit order", "a1,a2 b1", applied[tenant] + " " + applied[other_tenant]);
  check("... applied once each", "3 0", std::to_string(consumer.stats().applied) + " " +
                                          std::to_string(consumer.stats().skipped_redeliveries));
  check("... and acked: the next poll hands out nothing", "0", std::to_string(consumer.poll_once(handler)));
  // A commit on a worker notifies there, not on the coordinator: the wait returns well before
  // the idle poll (5 s) only because the consumer listens on the workers too.
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    emit(other_tenant, "client-citus-emit-4-" + stamp, "b2");
  });
  const bool woken = consumer.wait_for_events();
  later.join();
  check("a commit on the other tenant's worker wakes the wait (LISTEN on every node)", "true 1",
        std::string(woken ? "true " : "false ") + std::to_string(consumer.stats().woken_by_notify));
  check("... and its event is handed out", "1 b1,b2", std::to_string(consumer.poll_once(handler)) + " " + applied[other_tenant]);

  idem::OutboxConsumerOptions plain_consumer_options = consumer_options;
  plain_consumer_options.citus = false;
  idem::OutboxConsumer plain_consumer(url, plain_consumer_options);
  refused.clear();
  try {
    plain_consumer.poll_once(handler);
  } catch (const idem::ClientError& e) {
    refused = e.name();
  }
  check("without OutboxConsumerOptions::citus, the claim across tenants is refused", "ERR_TENANT_NOT_LOCAL", refused);

  return citus_checks::finish("client_citus");
}
