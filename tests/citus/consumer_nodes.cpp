// idem::OutboxConsumer (OutboxConsumerOptions::citus) while the cluster's nodes change under it;
// tests/citus/citus_test.sh runs each mode.
//   consumer_nodes stopped URL STAYING_TENANT STOPPED_TENANT STOP_CMD START_CMD
//     A worker stops between polls: the other worker's tenant is still handed out (one node that
//     cannot be reached must not stall every tenant), and once the worker is back its tenant's
//     events follow, each applied once.
//   consumer_nodes hung URL STAYING_TENANT HUNG_TENANT HANG_CMD RESUME_CMD
//     A worker's postmaster is held (it accepts connections and never answers) and a consumer
//     starts meanwhile: its first poll must come back (a listener connect without a timeout
//     waited for ever) with the other worker's tenant's event, and once the worker goes on, its
//     tenant's events follow, each applied once.
//   consumer_nodes added URL TENANT NEW_NODE_URL
//     A worker joins after the consumer connected and the tenant's shards move to it: its
//     commits notify there, and the consumer's wait hears them.
// Both want the topic nodes.citus and its consumer nodes-citus in the database of URL.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <thread>

#include <pqxx/pqxx>

#include "idem/client.hpp"
#include "idem/outbox_consumer.hpp"
#include "tests/citus/checks.hpp"

namespace {

using citus_checks::check;

constexpr const char* kTopic = "nodes.citus";

struct Run {
  idem::Client client;
  idem::OutboxConsumer consumer;
  std::map<std::string, int> applied;  // tenant -> events applied
  std::string stamp = std::to_string(std::time(nullptr));
  int emitted = 0;

  static idem::ClientOptions client_options() {
    idem::ClientOptions o;
    o.citus = true;
    o.pool_size = 1;
    return o;
  }
  static idem::OutboxConsumerOptions consumer_options() {
    idem::OutboxConsumerOptions o;
    o.consumer = "nodes-citus";
    o.citus = true;
    o.idle_poll = std::chrono::milliseconds(5000);
    return o;
  }
  explicit Run(const std::string& url) : client(url, client_options()), consumer(url, consumer_options()) {}

  void emit(const std::string& tenant) {
    citus_checks::emit(client, kTopic, tenant, "nodes-citus-" + std::to_string(++emitted) + "-" + stamp, "{}");
  }
  // One poll, or the name of what it threw.
  std::string poll() {
    try {
      return std::to_string(consumer.poll_once([&](idem::SqlTransaction&, const idem::OutboxEvent& e) { ++applied[e.tenant_id]; }));
    } catch (const idem::ClientError& e) {
      return std::string("threw ") + e.name() + ": " + e.what();
    }
  }
};

int stopped(const std::string& url, const std::string& staying, const std::string& stopping, const std::string& stop_cmd,
            const std::string& start_cmd) {
  Run run(url);
  run.emit(staying);
  run.emit(stopping);
  check("before the stop, one poll hands out both tenants' events", "2", run.poll());
  run.emit(staying);
  run.emit(stopping);
  check("the worker stops", "0", std::to_string(std::system(stop_cmd.c_str())));
  const std::uint64_t errors_before = run.consumer.stats().errors;
  check("a poll with a worker down hands out the other worker's tenant's event", "1", run.poll());
  check("... and reports the node that did not answer (one error counted)", "1",
        std::to_string(run.consumer.stats().errors - errors_before));
  std::string refused;
  try {
    run.emit(stopping);
  } catch (const idem::ClientError& e) {
    refused = e.name();
  }
  check("a request for the stopped worker's tenant fails as SQLSTATE_08006, not as a lost connection", "SQLSTATE_08006",
        refused);
  run.emit(staying);
  check("... and the next one too, while the worker is still down", "1", run.poll());
  check("the worker starts again", "0", std::to_string(std::system(start_cmd.c_str())));
  check("once it is back, its tenant's event is handed out", "1", run.poll());
  check("each event applied once: 3 of the staying tenant, 2 of the other", "3 2 0",
        std::to_string(run.applied[staying]) + " " + std::to_string(run.applied[stopping]) + " " +
            std::to_string(run.consumer.stats().skipped_redeliveries));
  check("nothing is left", "0", run.poll());
  return citus_checks::finish("consumer_nodes stopped");
}

int hung(const std::string& url, const std::string& staying, const std::string& held, const std::string& hang_cmd,
         const std::string& resume_cmd) {
  {
    Run before(url);
    before.emit(staying);
    before.emit(held);
  }
  check("the worker's postmaster is held", "0", std::to_string(std::system(hang_cmd.c_str())));
  Run run(url);  // a consumer that starts while the worker does not answer
  const auto began = std::chrono::steady_clock::now();
  const std::string first = run.poll();
  const auto took = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - began);
  std::printf("consumer_nodes hung: the first poll took %lld s\n", static_cast<long long>(took.count()));
  check("a consumer started while a worker hangs: its first poll hands out the other worker's tenant's event", "1", first);
  check("... and reports the listener and the backlog of the node that did not answer (two errors)", "2",
        std::to_string(run.consumer.stats().errors));
  check("the worker goes on", "0", std::to_string(std::system(resume_cmd.c_str())));
  check("once it answers, its tenant's event is handed out", "1", run.poll());
  check("each event applied once", "1 1 0",
        std::to_string(run.applied[staying]) + " " + std::to_string(run.applied[held]) + " " +
            std::to_string(run.consumer.stats().skipped_redeliveries));
  check("nothing is left", "0", run.poll());
  return citus_checks::finish("consumer_nodes hung");
}

int added(const std::string& url, const std::string& tenant, const std::string& new_node_url) {
  Run run(url);
  run.emit(tenant);
  check("before the node joins, a poll hands out the tenant's event", "1", run.poll());
  {
    pqxx::connection coordinator(url), joining(new_node_url);
    const std::string host = joining.hostname(), port = joining.port();
    pqxx::nontransaction c(coordinator);
    c.exec("SELECT citus_add_node(" + c.quote(host) + ", " + port + ")");
    c.exec("SELECT replicate_reference_tables()");  // before a shard moves there, as Citus wants
    pqxx::nontransaction j(joining);
    j.exec("SELECT idem.citus_prepare_node()");
    check("citus_prepare_node on the node added later puts its sequences in its group's range", "0",
          j.exec1("SELECT count(*) FROM pg_sequences WHERE schemaname = 'idem'"
                  " AND min_value >> 48 <> (SELECT groupid FROM pg_dist_local_group)")[0].as<std::string>());
    c.exec("SELECT citus_move_shard_placement(get_shard_id_for_distribution_column('idem.keys', " + c.quote(tenant) +
           "), p.nodename, p.nodeport, " + c.quote(host) + ", " + port + ", shard_transfer_mode => 'block_writes')"
           " FROM pg_dist_shard_placement p WHERE p.shardid = get_shard_id_for_distribution_column('idem.keys', " +
           c.quote(tenant) + ")");
    check("the tenant's shard is now on the node added later", port,
          c.exec1("SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('idem.keys', " +
                  c.quote(tenant) + ")")[0].as<std::string>());
  }
  // The first wait finds the new node, listens there and polls at once (what it missed).
  const auto began = std::chrono::steady_clock::now();
  const bool first = run.consumer.wait_for_events();
  const auto waited = std::chrono::steady_clock::now() - began;
  check("the first wait after the join returns to poll at once (a listener on the new node)", "false fast",
        std::string(first ? "true " : "false ") + (waited < std::chrono::seconds(2) ? "fast" : "slow"));
  check("... and that poll finds nothing yet", "0", run.poll());
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    run.emit(tenant);
  });
  const std::uint64_t woken_before = run.consumer.stats().woken_by_notify;
  const bool woken = run.consumer.wait_for_events();
  later.join();
  check("a commit on the node added later wakes the wait (before the 5 s idle poll)", "true 1",
        std::string(woken ? "true " : "false ") + std::to_string(run.consumer.stats().woken_by_notify - woken_before));
  const std::string handed_out = run.poll();
  check("... and its event is handed out, once", "1 2", handed_out + " " + std::to_string(run.applied[tenant]));
  return citus_checks::finish("consumer_nodes added");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "stopped" && argc == 7) return stopped(argv[2], argv[3], argv[4], argv[5], argv[6]);
    if (mode == "hung" && argc == 7) return hung(argv[2], argv[3], argv[4], argv[5], argv[6]);
    if (mode == "added" && argc == 5) return added(argv[2], argv[3], argv[4]);
  } catch (const std::exception& e) {
    check("consumer_nodes " + mode + " runs to its end", "", e.what());
    return citus_checks::finish(("consumer_nodes " + mode).c_str());
  }
  std::cerr << "usage: " << argv[0] << " stopped URL STAYING_TENANT STOPPED_TENANT STOP_CMD START_CMD\n"
            << "       " << argv[0] << " hung URL STAYING_TENANT HUNG_TENANT HANG_CMD RESUME_CMD\n"
            << "       " << argv[0] << " added URL TENANT NEW_NODE_URL\n";
  return 2;
}
