// The main job's scenarios (issue 10), each a few real HTTP requests and what they must return.
#include <algorithm>
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "driver.hpp"

namespace demo {
namespace {

std::string checkout_body(long cents, const std::string& method = "tok_visa") {
  return R"({"amount_cents":)" + std::to_string(cents) + R"(,"currency":"usd","payment_method":")" + method + R"("})";
}
std::string checkout_path(const std::string& session) { return "/checkout/" + session + "/complete"; }
std::string code_of(const Reply& r) { return r.json().value("code", ""); }
std::string status_and_code(const Reply& r) { return std::to_string(r.status) + " " + code_of(r); }

void arm(Driver& d, const std::string& mode, int count, int delay_ms) {
  d.processor("POST", "/_control/faults",
              R"({"mode":")" + mode + R"(","count":)" + std::to_string(count) + R"(,"delay_ms":)" +
                  std::to_string(delay_ms) + "}");
}

// Repeats the request while the key is held (409), as a client honouring Retry-After would.
Reply until_not_409(Driver& d, const std::string& session, const std::string& key, const std::string& body) {
  Reply r;
  for (int i = 0; i < 100; ++i) {
    r = d.post(checkout_path(session), key, body, d.config().token);
    if (r.status != 409) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return r;
}

// A checkout that must succeed; remembers the order it made.
Reply checkout_ok(Driver& d, const std::string& step, const std::string& session, const std::string& key,
                  const std::string& body, int expected = 201) {
  const Reply r = d.post(checkout_path(session), key, body, d.config().token);
  d.check(step, std::to_string(expected), std::to_string(r.status));
  if (r.status == expected) d.remember_order(session, key);
  return r;
}

void first_checkout_and_replay(Driver& d) {
  const std::string session = d.unique("cs"), key = d.unique("key-first");
  const Reply first = checkout_ok(d, "1 first checkout", session, key, checkout_body(1999));
  d.check("1 charges at processor", "1", std::to_string(d.charges_for(session)));
  const Reply again = d.post(checkout_path(session), key, checkout_body(1999), d.config().token);
  d.check("2 same request again", "201 replayed, same bytes",
          std::to_string(again.status) + (again.header("Idempotent-Replayed") == "true" &&
                                                  again.header("X-Cache-Lookup") == "IDEMPOTENT-HIT"
                                              ? " replayed"
                                              : " not replayed") +
              (again.body == first.body ? ", same bytes" : ", other bytes"));
  d.check("2 charges at processor", "1", std::to_string(d.charges_for(session)));
  const Reply changed = d.post(checkout_path(session), key, checkout_body(2999), d.config().token);
  d.check("4 same key, changed body", "422 ERR_IDEMPOTENCY_PAYLOAD_MISMATCH", status_and_code(changed));
  d.check("4 the 422 names the field that differs", R"(["/amount_cents"])", changed.json().value("differs", nlohmann::json()).dump());
  const Reply other_tenant = d.post(checkout_path(session), key, checkout_body(1999), d.config().other_token);
  d.check("4b same key, another tenant", "201 (its own key space)", std::to_string(other_tenant.status) +
                                                                         (other_tenant.status == 201 ? " (its own key space)" : ""));
  if (other_tenant.status == 201) d.remember_order(session + "@globex", key);
}

void fifty_duplicates(Driver& d) {
  const std::string session = d.unique("cs"), key = d.unique("key-fifty");
  std::vector<std::future<Reply>> calls;
  for (int i = 0; i < 50; ++i) {
    calls.push_back(std::async(std::launch::async, [&] {
      return d.post(checkout_path(session), key, checkout_body(4200), d.config().token);
    }));
  }
  std::map<int, int> by_status;
  std::set<std::string> bodies_201;
  for (auto& f : calls) {
    const Reply r = f.get();
    ++by_status[r.status];
    if (r.status == 201) bodies_201.insert(r.body);
  }
  std::string got;
  for (const auto& [status, n] : by_status) got += (got.empty() ? "" : ", ") + std::to_string(n) + "x" + std::to_string(status);
  d.check("3 50 concurrent duplicates", by_status.size() <= 2 && by_status[201] >= 1 &&
                                            by_status[201] + by_status[409] == 50 && bodies_201.size() == 1,
          "only 201 (one body) and 409", got + ", " + std::to_string(bodies_201.size()) + " distinct 201 body");
  d.check("3 charges at processor", "1", std::to_string(d.charges_for(session)));
  d.remember_order(session, key);
}

void in_flight(Driver& d) {
  const std::string session = d.unique("cs"), key = d.unique("key-inflight");
  arm(d, "slow", 1, 1500);
  auto first = std::async(std::launch::async, [&] {
    return d.post(checkout_path(session), key, checkout_body(1500), d.config().token);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const Reply second = d.post(checkout_path(session), key, checkout_body(1500), d.config().token);
  d.check("5 request while the first is in flight", "409 ERR_IDEMPOTENCY_IN_PROGRESS, Retry-After",
          status_and_code(second) + (second.header("Retry-After").empty() ? "" : ", Retry-After"));
  const Reply done = first.get();
  d.check("5 the first one", "201", std::to_string(done.status));
  if (done.status == 201) d.remember_order(session, key);
}

void bad_requests(Driver& d) {
  const std::string session = d.unique("cs");
  const Reply no_key = d.post(checkout_path(session), std::nullopt, checkout_body(1000), d.config().token);
  d.check("6 missing Idempotency-Key", "400 ERR_IDEMPOTENCY_KEY_MISSING", status_and_code(no_key));
  const Reply short_key = d.post(checkout_path(session), "short", checkout_body(1000), d.config().token);
  d.check("6b key too short", "400 ERR_IDEMPOTENCY_KEY_INVALID", status_and_code(short_key));
  const Reply no_token = d.post(checkout_path(session), d.unique("key-noauth"), checkout_body(1000), std::nullopt);
  d.check("6c no bearer token", "401 ERR_UNAUTHENTICATED", status_and_code(no_token));
  const Reply forged = d.post(checkout_path(session), d.unique("key-forged"), checkout_body(1000),
                              std::string("YWNtZTp3ZWI.00"));
  d.check("6d forged token", "401 ERR_UNAUTHENTICATED", status_and_code(forged));
  d.check("6 charges at processor", "0", std::to_string(d.charges_for(session)));
}

void transient_failure(Driver& d) {
  const std::string session = d.unique("cs"), key = d.unique("key-transient");
  arm(d, "transient", 1, 0);
  const Reply failed = d.post(checkout_path(session), key, checkout_body(2500), d.config().token);
  d.check("7 processor fails transiently", "503 ERR_PROCESSOR_UNAVAILABLE, Retry-After",
          status_and_code(failed) + (failed.header("Retry-After").empty() ? "" : ", Retry-After"));
  checkout_ok(d, "7 retry with the same key", session, key, checkout_body(2500));
  d.check("7 charges at processor", "1", std::to_string(d.charges_for(session)));
}

void processor_timeout(Driver& d) {
  const std::string session = d.unique("cs"), key = d.unique("key-timeout");
  arm(d, "timeout", 1, 3000);  // charged, answer late: the service gives up after 2 s
  const Reply timed_out = d.post(checkout_path(session), key, checkout_body(2600), d.config().token);
  d.check("7b processor times out (it charged)", "504 ERR_PROCESSOR_TIMEOUT", status_and_code(timed_out));
  checkout_ok(d, "7b retry verifies, does not charge", session, key, checkout_body(2600));
  d.check("7b charges at processor", "1", std::to_string(d.charges_for(session)));
}

void crash_after_charge(Driver& d) {
  const std::string session = d.unique("cs"), key = d.unique("key-crash");
  const Reply crashed = d.post(checkout_path(session), key, checkout_body(3100), d.config().token,
                               {{"X-Demo-Fault", "crash-after-charge"}});
  d.check("8 service killed after the charge", "no answer (connection dropped)",
          crashed.status == 0 ? "no answer (connection dropped)" : std::to_string(crashed.status));
  d.check("8 charges at processor", "1", std::to_string(d.charges_for(session)));
  d.stack("start service >/dev/null");
  const Reply retry = until_not_409(d, session, key, checkout_body(3100));
  d.check("8 restarted; retry resumes and verifies", "201", std::to_string(retry.status));
  if (retry.status == 201) d.remember_order(session, key);
  d.check("8 charges at processor", "1", std::to_string(d.charges_for(session)));
  // The audit rows of the two attempts, in order (the retries refused while the lease ran are
  // left out): the first checkpointed before it called the processor, charged and died; the
  // second wrote the first's abandoned row when it took over (it may have charged: unknown),
  // found the charge at the processor, checkpointed that and completed.
  d.check("8 audit rows: attempt outcome (handler called)",
          "1 checkpoint (false), 1 abandoned (unknown), 2 checkpoint (true), 2 completed (true)",
          d.sql("SELECT string_agg(n || ' ' || outcome || ' (' || coalesce(handler_called::text, 'unknown') || ')', ', '"
                " ORDER BY mutation_id) FROM (SELECT m.*, dense_rank() OVER (ORDER BY attempt) AS n"
                " FROM idem.mutations m WHERE client_key = '" + key + "' AND attempt IS NOT NULL) a"));
}

void buyer_action(Driver& d) {
  const std::string session = d.unique("cs"), key = d.unique("key-3ds");
  const Reply first = checkout_ok(d, "9 payment needs buyer action", session, key, checkout_body(5000, "tok_requires_action"), 202);
  const std::string url = first.json().value("escalation", nlohmann::json::object()).value("continue_url", "");
  d.check("9 escalation.continue_url", url.find("/authorize") != std::string::npos, "a processor URL", url);
  const Reply replay = d.post(checkout_path(session), key, checkout_body(5000, "tok_requires_action"), d.config().token);
  d.check("9 stored and replayed", "202, same bytes",
          std::to_string(replay.status) + (replay.body == first.body ? ", same bytes" : ", other bytes"));
}

void declined(Driver& d) {
  const std::string session = d.unique("cs"), key = d.unique("key-decline");
  const Reply r = d.post(checkout_path(session), key, checkout_body(700, "tok_decline"), d.config().token);
  d.check("9b card declined", "402 ERR_PAYMENT_DECLINED", status_and_code(r));
  const Reply again = d.post(checkout_path(session), key, checkout_body(700, "tok_decline"), d.config().token);
  d.check("9b replayed, not charged again", "402, same bytes",
          std::to_string(again.status) + (again.body == r.body ? ", same bytes" : ", other bytes"));
}

// The sync plane: orders made while the consumer is down, a consumer killed mid-batch, restarted.
void consumer_killed(Driver& d) {
  d.stack("stop consumer");
  for (int i = 0; i < 20; ++i) {
    const std::string session = d.unique("cs"), key = d.unique("key-sync");
    const Reply r = d.post(checkout_path(session), key, checkout_body(100 + i), d.config().token);
    if (r.status == 201) d.remember_order(session, key);
  }
  d.stack("start consumer >/dev/null");  // CONSUMER_ARGS slow it down (see the caller)
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  const std::string before = d.sql("SELECT count(*) FROM sync_orders");
  d.stack("kill consumer");
  d.note("10 consumer killed mid-batch", "after recording " + before + " orders in all");
  setenv("CONSUMER_ARGS", "", 1);
  d.stack("start consumer >/dev/null");
  std::string backlog;
  for (int i = 0; i < 150; ++i) {
    backlog = d.sql("SELECT coalesce(sum(backlog), 0) FROM idem.outbox_lag WHERE consumer = 'sync_plane'");
    if (backlog == "0") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  d.check("10 restarted: backlog", "0", backlog);
  d.check("10 every order recorded once", d.sql("SELECT count(*) FROM orders"),
          d.sql("SELECT count(*) FROM sync_orders"));
  d.check("10 no order recorded twice", "0",
          d.sql("SELECT count(*) FROM (SELECT order_id FROM sync_order_mutations GROUP BY 1 HAVING count(*) > 1) t"));
}

void refunds(Driver& d) {
  const std::string session = d.unique("cs");
  const Reply order = checkout_ok(d, "11 checkout to refund", session, d.unique("key-torefund"), checkout_body(8000));
  const std::string payment = order.json().value("payment_id", "");
  const std::string path = "/v1/payments/" + payment + "/refunds";
  const std::string key = d.unique("key-refund");
  const std::string body = R"({"amount_cents":8000,"reason":"requested_by_customer","currency":"usd"})";
  const Reply refund = d.post(path, key, body, d.config().token);
  d.check("11 refund", "201", std::to_string(refund.status));
  const Reply replay = d.post(path, key, body, d.config().token);
  d.check("11 refund replayed", "201 replayed, same bytes",
          std::to_string(replay.status) + (replay.header("Idempotent-Replayed") == "true" ? " replayed" : " not replayed") +
              (replay.body == refund.body ? ", same bytes" : ", other bytes"));
  const Reply changed = d.post(path, key, R"({"amount_cents":4000,"reason":"requested_by_customer","currency":"usd"})",
                               d.config().token);
  d.check("11 refund, same key, changed amount", "422 ERR_IDEMPOTENCY_PAYLOAD_MISMATCH", status_and_code(changed));
  d.check("11 the 422 names the field that differs", R"(["/amount_cents"])", changed.json().value("differs", nlohmann::json()).dump());
  d.check("11 refunds at processor for the charge", "1",
          std::to_string([&] {
            int n = 0;
            const std::string charge = order.json().value("charge_id", "");
            for (const auto& r : d.processor("GET", "/v1/refunds").json().value("data", nlohmann::json::array())) {
              if (r.value("charge", "") == charge) ++n;
            }
            return n;
          }()));

  // The service killed right after the processor refunded, before anything was recorded: the
  // retry resumes at the checkpoint and finds the refund instead of refunding again.
  const std::string crash_session = d.unique("cs");
  const Reply paid = checkout_ok(d, "11b checkout, refund, service killed", crash_session, d.unique("key-tocrash"),
                                 checkout_body(3000));
  const std::string crash_path = "/v1/payments/" + paid.json().value("payment_id", "") + "/refunds";
  const std::string crash_key = d.unique("key-refund-crash");
  const std::string crash_body = R"({"amount_cents":3000,"reason":"requested_by_customer","currency":"usd"})";
  const Reply killed = d.post(crash_path, crash_key, crash_body, d.config().token, {{"X-Demo-Fault", "crash-after-refund"}});
  d.check("11b service killed after the refund", "no answer (connection dropped)",
          killed.status == 0 ? "no answer (connection dropped)" : std::to_string(killed.status));
  d.stack("start service >/dev/null");
  Reply resumed;
  for (int i = 0; i < 100; ++i) {
    resumed = d.post(crash_path, crash_key, crash_body, d.config().token);
    if (resumed.status != 409) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  d.check("11b restarted; retry resumes and finds the refund", "201, order_status refunded",
          std::to_string(resumed.status) + ", order_status " + resumed.json().value("order_status", "?"));
  d.check("11b recorded once", "refunds 1, refunded 3000, processor 3000 in 1 refund",
          "refunds " + d.sql("SELECT count(*) FROM refunds WHERE payment_id = '" + paid.json().value("payment_id", "") + "'") +
              ", " + d.sql("SELECT status || ' ' || refunded_cents FROM orders WHERE order_id = '" +
                           paid.json().value("order_id", "") + "'") +
              ", processor " + d.sql("SELECT amount_refunded_cents || ' in ' || (SELECT count(*) FROM processor.refunds r"
                                     " WHERE r.charge_id = c.id) || ' refund' FROM processor.charges c WHERE id = '" +
                                     paid.json().value("charge_id", "") + "'"));

  // An order that shipped: the order machine has no way from shipped to refunded.
  const std::string shipped_session = d.unique("cs");
  const Reply shipped = checkout_ok(d, "12 checkout, then shipped", shipped_session, d.unique("key-toship"), checkout_body(6000));
  d.sql("UPDATE orders SET status = 'shipped' WHERE order_id = '" + shipped.json().value("order_id", "") + "' RETURNING status");
  const std::string shipped_path = "/v1/payments/" + shipped.json().value("payment_id", "") + "/refunds";
  const std::string refused_key = d.unique("key-refund-shipped");
  const Reply refused = d.post(shipped_path, refused_key, body, d.config().token);
  d.check("12 refund of a shipped order", "409 ERR_INVALID_TRANSITION", status_and_code(refused));
  const Reply refused_again = d.post(shipped_path, refused_key, body, d.config().token);
  d.check("12 the refusal replayed", "409, same bytes",
          std::to_string(refused_again.status) + (refused_again.body == refused.body ? ", same bytes" : ", other bytes"));
}

// Refunds racing what else happens to the payment: a shipment, partial refunds that add up,
// and refunds that together ask for more than was paid.
void refund_races(Driver& d) {
  const auto order_of = [&](const std::string& step, long cents) {
    return checkout_ok(d, step, d.unique("cs"), d.unique("key-race"), checkout_body(cents)).json();
  };
  const auto refund_body = [](long cents) {
    return R"({"amount_cents":)" + std::to_string(cents) + R"(,"reason":"race","currency":"usd"})";
  };
  // The processor refunds slowly; the order ships meanwhile: the refund is recorded as it happened.
  const nlohmann::json shipped = order_of("13 checkout, refund races its shipment", 2500);
  const std::string path = "/v1/payments/" + shipped.value("payment_id", "") + "/refunds";
  arm(d, "slow", 1, 1000);
  auto refund = std::async(std::launch::async, [&] { return d.post(path, d.unique("key-race-refund"), refund_body(2500), d.config().token); });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  d.sql("UPDATE orders SET status = 'shipped' WHERE order_id = '" + shipped.value("order_id", "") + "' RETURNING status");
  const Reply raced = refund.get();
  d.check("13 refund answered", "201, order_status shipped",
          std::to_string(raced.status) + ", order_status " + raced.json().value("order_status", "?"));
  d.check("13 recorded as it happened", "refunds 1, refunded_cents 2500, processor 2500",
          "refunds " + d.sql("SELECT count(*) FROM refunds WHERE payment_id = '" + shipped.value("payment_id", "") + "'") +
              ", refunded_cents " + d.sql("SELECT refunded_cents FROM orders WHERE order_id = '" + shipped.value("order_id", "") + "'") +
              ", processor " + d.sql("SELECT amount_refunded_cents FROM processor.charges WHERE id = '" + shipped.value("charge_id", "") + "'"));
  // Two partial refunds under different keys, at once, adding up to the whole payment.
  const nlohmann::json split = order_of("14 checkout, two partial refunds at once", 1000);
  const std::string split_path = "/v1/payments/" + split.value("payment_id", "") + "/refunds";
  arm(d, "slow", 2, 800);
  auto r600 = std::async(std::launch::async, [&] { return d.post(split_path, d.unique("key-split-600"), refund_body(600), d.config().token); });
  auto r400 = std::async(std::launch::async, [&] { return d.post(split_path, d.unique("key-split-400"), refund_body(400), d.config().token); });
  d.check("14 both refunds", "201 201", std::to_string(r600.get().status) + " " + std::to_string(r400.get().status));
  d.check("14 the order is refunded", "refunded 1000",
          d.sql("SELECT status || ' ' || refunded_cents FROM orders WHERE order_id = '" + split.value("order_id", "") + "'"));
  // Three refunds under different keys at once, each of two thirds of the payment: all pass the
  // service's check of what is left (the processor is slowed), the processor refunds one.
  const nlohmann::json over = order_of("15 checkout, three refunds over the payment at once", 3000);
  const std::string over_path = "/v1/payments/" + over.value("payment_id", "") + "/refunds";
  arm(d, "slow", 3, 700);
  std::vector<std::future<Reply>> overs;
  for (int i = 0; i < 3; ++i) {
    overs.push_back(std::async(std::launch::async, [&, i] {
      return d.post(over_path, d.unique("key-over-" + std::to_string(i)), refund_body(2000), d.config().token);
    }));
  }
  std::multiset<std::string> answers;
  for (auto& f : overs) {
    std::string a = status_and_code(f.get());
    if (!a.empty() && a.back() == ' ') a.pop_back();  // a 201 has no code
    answers.insert(a);
  }
  std::string got;
  for (const auto& a : answers) got += (got.empty() ? "" : ", ") + a;
  d.check("15 answers", "201, 400 ERR_REFUND_REFUSED, 400 ERR_REFUND_REFUSED", got);
  d.check("15 refunded once", "refunds 1, refunded_cents 2000, processor 2000",
          "refunds " + d.sql("SELECT count(*) FROM refunds WHERE payment_id = '" + over.value("payment_id", "") + "'") +
              ", refunded_cents " + d.sql("SELECT refunded_cents FROM orders WHERE order_id = '" + over.value("order_id", "") + "'") +
              ", processor " + d.sql("SELECT amount_refunded_cents FROM processor.charges WHERE id = '" + over.value("charge_id", "") + "'"));
}

}  // namespace

void run_scenarios(Driver& d) {
  d.processor("POST", "/_control/reset");
  first_checkout_and_replay(d);
  fifty_duplicates(d);
  in_flight(d);
  bad_requests(d);
  transient_failure(d);
  processor_timeout(d);
  crash_after_charge(d);
  buyer_action(d);
  declined(d);
  setenv("CONSUMER_ARGS", "--apply-delay-ms 60 --batch 10", 1);
  consumer_killed(d);
  refunds(d);
  refund_races(d);
}

void totals_and_forensics(Driver& d) {
  int charges = 0;
  for (const auto& c : d.processor("GET", "/v1/charges").json().value("data", nlohmann::json::array())) {
    const std::string s = c.value("status", "");
    if (s == "succeeded" || s == "requires_action") ++charges;
  }
  // Let the consumer catch up with the last orders.
  for (int i = 0; i < 100 && d.sql("SELECT count(*) FROM orders") != d.sql("SELECT count(*) FROM sync_orders"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string orders = d.sql("SELECT count(*) FROM orders");
  const std::string synced = d.sql("SELECT count(*) FROM sync_orders");
  const std::string keys = std::to_string(d.orders_made());
  d.check("charges at processor = orders = sync_orders = distinct keys", keys + " = " + keys + " = " + keys + " = " + keys,
          std::to_string(charges) + " = " + orders + " = " + synced + " = " + keys);
  d.check("idem.double_charges()", "0 rows", d.sql("SELECT count(*) FROM idem.double_charges()") + " rows");
  d.check("idem.double_charges_by_resource()", "0 rows",
          d.sql("SELECT count(*) FROM idem.double_charges_by_resource('" + d.started_at() + "')") + " rows");
  d.check("idem.reconcile() with the processor's export", "0 rows", std::to_string(d.reconcile().size()) + " rows");
}

namespace {

// An attempt held through SQL, as a service would hold it (tenant acme, caller web).
struct Held {
  std::string handle, attempt;
};
Held acquire_by_hand(Driver& d, const std::string& key, const std::string& resource, const std::string& lease) {
  const std::string held = d.sql("SELECT handle || ' ' || attempt FROM idem.acquire('acme', '" + key +
                                 "', '{}'::jsonb, caller => 'web', resource => '" + resource + "', lease => '" + lease + "')");
  return {held.substr(0, held.find(' ')), held.substr(held.find(' ') + 1)};
}
std::string processor_key(Driver& d, const Held& h) {
  return d.sql("SELECT idem.handler_key('" + h.handle + "', " + h.attempt + ")");
}
// A charge (or, with charge set, a refund of it) made at the processor under processor_key: its id.
std::string at_processor(Driver& d, const std::string& processor_key, long cents, const std::string& session,
                         const std::string& charge = "") {
  httplib::Client c(d.config().processor_url);
  const auto r = charge.empty()
                     ? c.Post("/v1/charges", {{"Idempotency-Key", processor_key}},
                              R"({"amount_cents":)" + std::to_string(cents) +
                                  R"(,"currency":"usd","source":"tok_visa","metadata":{"session_id":")" + session + R"("}})",
                              "application/json")
                     : c.Post("/v1/refunds", {{"Idempotency-Key", processor_key}},
                              R"({"charge":")" + charge + R"(","amount_cents":)" + std::to_string(cents) + "}",
                              "application/json");
  return r ? nlohmann::json::parse(r->body, nullptr, false).value("id", "") : "";
}
void complete_by_hand(Driver& d, const Held& h, const std::string& order_id, const std::string& recorded) {
  d.sql("SELECT idem.complete('" + h.handle + "', " + h.attempt + ", 201, '{}', '', '" + order_id + "', '" + recorded + "')");
}

}  // namespace

// A double charge made the way a service bug would make one: an attempt that charged (ch_1) and
// crashed, and a resume that charged again under a fresh processor key instead of the handler key.
void plant_double_charge(Driver& d) {
  const std::string key = d.unique("key-planted"), session = d.unique("cs-planted");
  const std::string resource = "POST /checkout/" + session + "/complete";
  Held held = acquire_by_hand(d, key, resource, "300 milliseconds");
  const std::string ch1 = at_processor(d, processor_key(d, held), 900, session);
  d.sql("SELECT idem.checkpoint('" + held.handle + "', " + held.attempt + ", 'charged', '{\"charge_id\":\"" + ch1 + "\"}')");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  held = acquire_by_hand(d, key, resource, "300 milliseconds");
  const std::string ch2 = at_processor(d, d.unique("not-the-handler-key"), 900, session);
  complete_by_hand(d, held, "ord_planted", "{\"charge_id\":\"" + ch2 + "\"}");
  d.check("planted double charge: charges at processor", "2", std::to_string(d.charges_for(session)));
  d.check("planted double charge: idem.double_charges()",
          "1 row: " + key + " " + std::min(ch1, ch2) + "," + std::max(ch1, ch2),
          d.sql("SELECT count(*) || ' row: ' || min(client_key) || ' ' || array_to_string(min(charge_ids), ',')"
                " FROM (SELECT client_key, (SELECT array_agg(c ORDER BY c) FROM unnest(charge_ids) c) AS charge_ids"
                " FROM idem.double_charges()) t"));
}

// Each kind of discrepancy idem.reconcile names, made as it happens in production (issue 25):
// one checkout paid under two keys through the service; a charge the operator resolved as
// failed without looking at the processor; a charge and a refund recorded but never made; a
// charge of 1,000 recorded as 900, then refunded in full on the processor's dashboard.
void plant_discrepancies(Driver& d) {
  const std::string twice = d.unique("cs-twice");
  const Reply first = d.post(checkout_path(twice), d.unique("key-twice-a"), checkout_body(2100), d.config().token);
  const Reply second = d.post(checkout_path(twice), d.unique("key-twice-b"), checkout_body(2100), d.config().token);
  d.check("planted: one checkout under two keys", "201 201", std::to_string(first.status) + " " + std::to_string(second.status));
  const std::string first_charge = first.json().value("charge_id", "");

  const std::string stuck_session = d.unique("cs-resolved");
  const Held stuck = acquire_by_hand(d, d.unique("key-resolved"), "/checkout/" + stuck_session + "/complete", "300 milliseconds");
  const std::string orphan = at_processor(d, processor_key(d, stuck), 3300, stuck_session);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  d.sql("SELECT idem.resolve_stuck('" + stuck.handle + "', " + stuck.attempt +
        ", 'customer says the payment failed', 402) IS NULL");

  const Held never = acquire_by_hand(d, d.unique("key-never"), "/checkout/" + d.unique("cs-never") + "/complete", "30 seconds");
  complete_by_hand(d, never, "ord_never", R"({"charge_id":"ch_from_the_sandbox","amount_cents":1234,"currency":"usd"})");
  const Held never_refund = acquire_by_hand(d, d.unique("key-never-refund"), "/v1/payments/planted/refunds", "30 seconds");
  complete_by_hand(d, never_refund, "ord_never",
                   R"({"refund_id":"re_from_the_sandbox","charge_id":")" + first_charge + R"(","amount_cents":100,"currency":"usd"})");

  const std::string amount_session = d.unique("cs-amount");
  const Held amount = acquire_by_hand(d, d.unique("key-amount"), "/checkout/" + amount_session + "/complete", "30 seconds");
  const std::string charged = at_processor(d, processor_key(d, amount), 1000, amount_session);
  complete_by_hand(d, amount, "ord_amount", R"({"charge_id":")" + charged + R"(","amount_cents":900,"currency":"usd"})");
  const std::string dashboard_refund = at_processor(d, d.unique("dashboard-refund"), 1000, amount_session, charged);

  const std::vector<std::string> found = d.reconcile();
  std::vector<std::string> kinds;
  for (const auto& row : found) kinds.push_back(row.substr(0, row.find(' ')));
  std::sort(kinds.begin(), kinds.end());
  std::string got;
  for (const auto& kind : kinds) got += (got.empty() ? "" : ", ") + kind;
  d.check("planted: idem.reconcile's rows",
          "amount_mismatch, duplicate_charge, duplicate_charge, missing_charge, missing_refund, orphan_charge, "
          "orphan_charge, orphan_refund, refund_exceeds_charge",
          got);
  std::string unnamed;
  for (const std::string& row : {"orphan_charge " + orphan, "duplicate_charge " + second.json().value("charge_id", ""),
                                 std::string("missing_charge ch_from_the_sandbox"), std::string("missing_refund re_from_the_sandbox"),
                                 "amount_mismatch " + charged, "refund_exceeds_charge " + charged, "orphan_refund " + dashboard_refund}) {
    if (std::find(found.begin(), found.end(), row) == found.end()) unnamed += (unnamed.empty() ? "" : "; ") + row;
  }
  d.check("planted: each names the planted object", "all named", unnamed.empty() ? "all named" : "not found: " + unnamed);
}

}  // namespace demo
