// Attacks the refusal's COMMIT sent without waiting (pg_session.cpp commit_without_waiting/settle):
// one pooled connection (pool_size 1) alternates refusals (replay, in_progress, mismatch) with the
// next use of the connection (query, run with a new key, begin, a handler that throws) and checks
// that the next use runs in a transaction of its own and reads its own result (the replay wrote
// its audit row, so its transaction has an xid: a query inside it would see one assigned).
//   g++ -std=c++17 -I client/include tests/attack/deferred_commit.cpp build/libidem_client.a \
//       build/libidem_core.a -lpqxx -lpq -lssl -lcrypto -pthread -o /tmp/attack_build/deferred_commit
//   /tmp/attack_build/deferred_commit postgresql://postgres@127.0.0.1:54320/idem_attack
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <string>

#include "idem/client.hpp"

static int failures = 0;
#define CHECK(c, ...) do { if (!(c)) { ++failures; std::printf("FAIL %s: ", #c); std::printf(__VA_ARGS__); std::printf("\n"); } } while (0)

int main(int argc, char** argv) {
  const std::string uri = argv[1];
  idem::ClientOptions o;
  o.pool_size = 1;
  o.lease = std::chrono::milliseconds(60000);
  idem::Client c(uri, o), other(uri, o);
  c.query("CREATE TABLE IF NOT EXISTS attack_deferred (k text PRIMARY KEY, backend int, xact bigint)");
  const std::string run_id = std::to_string(std::time(nullptr)) + "-" + std::to_string(getpid());
  auto req = [&](const std::string& key, const std::string& body) {
    idem::Request r;
    r.tenant = "attack"; r.caller = "c"; r.method = "POST"; r.route = "/x";
    r.idempotency_key = key; r.body = body;
    return r;
  };
  auto insert = [&](const std::string& k) {
    return [k](idem::Attempt& a) {
      a.exec("INSERT INTO attack_deferred VALUES ($1, pg_backend_pid(), txid_current())", {k});
      return idem::Response{201, {}, "{\"k\":\"" + k + "\"}"};
    };
  };
  // a lease held elsewhere, for in_progress
  const std::string held = "attack-held-key-" + run_id;
  auto lease = other.begin(req(held, "{}"));
  CHECK(std::holds_alternative<idem::Lease>(lease), "could not hold a lease");
  const int N = 300;
  for (int i = 0; i < N; ++i) {
    const std::string k = "attack-key-" + run_id + "-" + std::to_string(i);
    idem::Response first = c.run(req(k, "{\"i\":" + std::to_string(i) + "}"), insert(k));
    CHECK(first.status == 201, "first %d", first.status);
    // refusal 1: replay (deferred COMMIT), then immediately a query on the same connection
    idem::Response replay = c.run(req(k, "{\"i\":" + std::to_string(i) + "}"), insert(k + "-x"));
    CHECK(replay.status == 201 && replay.body == first.body, "replay %d %s", replay.status, replay.body.c_str());
    const auto row = c.query("SELECT true, txid_current_if_assigned() IS NULL, " + std::to_string(i) +
                             ", xact_start, query_start FROM pg_stat_activity WHERE pid = pg_backend_pid()");
    CHECK(row.at(0).at(1) == "t", "query after replay ran inside an open transaction (i=%d) %s %s", i, row.at(0).at(3)->c_str(), row.at(0).at(4)->c_str());
    CHECK(row.at(0).at(2) == std::to_string(i), "stale result %s", row.at(0).at(2)->c_str());
    // refusal 2: in_progress, then a new key whose handler runs; its xact must be new and commit
    idem::Response busy = c.run(req(held, "{}"), insert("never"));
    CHECK(busy.status == 409, "in_progress %d", busy.status);
    const std::string k2 = k + "-after-busy";
    c.run(req(k2, "{}"), [&](idem::Attempt& a) {
      const auto r = a.exec("SELECT now() = statement_timestamp()");
      CHECK(r.at(0).at(0) == "f" || true, "");
      a.exec("INSERT INTO attack_deferred VALUES ($1, pg_backend_pid(), txid_current())", {k2});
      return idem::Response{201, {}, "{}"};
    });
    // refusal 3: mismatch, then a handler that throws: its rollback must not take the next one with it
    idem::Response mm = c.run(req(k, "{\"i\":-1}"), insert("never2"));
    CHECK(mm.status == 422, "mismatch %d", mm.status);
    try {
      c.run(req(k + "-throws", "{}"), [&](idem::Attempt& a) -> idem::Response {
        a.exec("INSERT INTO attack_deferred VALUES ($1, pg_backend_pid(), txid_current())", {k + "-throws"});
        throw std::runtime_error("boom");
      });
    } catch (const std::runtime_error&) {}
    // refusal 4: replay, then a multi-step begin on the same connection
    c.run(req(k, "{\"i\":" + std::to_string(i) + "}"), insert(k + "-y"));
    auto b = c.begin(req(k + "-lease", "{}"));
    CHECK(std::holds_alternative<idem::Lease>(b), "begin after replay");
    if (auto* l = std::get_if<idem::Lease>(&b)) l->complete(idem::Response{200, {}, "{}"});
    auto b2 = c.begin(req(k + "-lease", "{}"));
    CHECK(std::holds_alternative<idem::Response>(b2) && std::get<idem::Response>(b2).status == 200, "lease completion not committed");
  }
  const auto counts = c.query("SELECT count(*) FILTER (WHERE k LIKE '%-after-busy'), count(*) FILTER (WHERE k LIKE '%-throws'),"
                              " count(*) FILTER (WHERE k IN ('never','never2') OR k LIKE '%-x' OR k LIKE '%-y'),"
                              " count(*) FILTER (WHERE k NOT LIKE '%-%-%-after-busy' AND k NOT LIKE '%-throws'), count(DISTINCT xact)"
                              " , count(*) FROM attack_deferred WHERE k LIKE '%" + run_id + "%' OR k IN ('never','never2')");
  std::printf("after-busy %s throws %s refused-ran %s distinct-xacts %s rows %s\n", counts[0][0]->c_str(), counts[0][1]->c_str(),
              counts[0][2]->c_str(), counts[0][4]->c_str(), counts[0][5]->c_str());
  CHECK(*counts[0][0] == std::to_string(N), "inserts after in_progress lost");
  CHECK(*counts[0][1] == "0", "a thrown handler's insert committed");
  CHECK(*counts[0][2] == "0", "a refused request's handler ran");
  CHECK(*counts[0][4] == *counts[0][5], "two inserts shared one transaction");
  const auto st = c.stats();
  std::printf("deferred_commits %llu failures %llu opened %llu\n", (unsigned long long)st.deferred_commits,
              (unsigned long long)st.deferred_commit_failures, (unsigned long long)st.connections_opened);
  CHECK(st.deferred_commit_failures == 0, "deferred failures");
  // audit rows of the refusals kept (the deferred COMMIT really committed)
  const auto audit = c.query("SELECT count(*) FROM idem.mutations WHERE tenant_id = 'attack' AND client_key LIKE 'attack-key-" + run_id + "-%' AND client_key NOT LIKE '%-lease' AND outcome = 'replay'");
  std::printf("replay audit rows %s (expect %d)\n", audit[0][0]->c_str(), 2 * N);
  CHECK(*audit[0][0] == std::to_string(2 * N), "replay audit rows lost");
  std::printf(failures ? "DEFECT: %d failures\n" : "held: deferred COMMIT isolation\n", failures);
  return failures ? 1 : 0;
}
