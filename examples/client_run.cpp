// A service handler made exactly-once with idem::Client::run (docs/client.md). Run it against the
// throwaway cluster: build/example_client_run "$(scripts/pg.sh url)". It creates an order twice
// with the same Idempotency-Key: the first call inserts and emits, the second replays the bytes.
#include <ctime>
#include <iostream>
#include <string>

#include "idem/client.hpp"

namespace {

// What an HTTP framework hands the service, turned into an idem::Request.
idem::Request checkout_request(const std::string& idempotency_key) {
  idem::Request r;
  r.tenant = "acme";
  r.caller = "checkout-web";
  r.method = "POST";
  r.route = "/v1/orders";
  r.idempotency_key = idempotency_key;  // std::nullopt when the header is absent: 400 by default
  r.body = R"({"cart":"cart_42","amount_cents":1999,"metadata":{"trace_id":"t-123"}})";
  r.fingerprint_exclusions = {"/metadata/trace_id"};  // a retry with a new trace id is the same request
  return r;
}

// The business transaction: runs once per key; its writes, its event and the stored response
// commit together.
idem::Response create_order(idem::Attempt& attempt) {
  const auto rows = attempt.exec(
      "INSERT INTO example_orders (tenant, cart, amount_cents) VALUES ($1, $2, $3) RETURNING id::text",
      {attempt.request().tenant, std::string("cart_42"), std::string("1999")});
  const std::string order_id = "ord_" + rows.at(0).at(0).value();
  attempt.emit("example.order_created", R"({"order_id":")" + order_id + R"("})", order_id);
  idem::Response response;
  response.status = 201;
  response.headers = {{"Content-Type", "application/json"}, {"Location", "/v1/orders/" + order_id}};
  response.body = R"({"order_id":")" + order_id + R"("})";
  return response;
}

void print(const char* label, const idem::Response& r) {
  std::cout << label << ": " << r.status << '\n';
  for (const idem::Header& h : r.headers) std::cout << "  " << h.name << ": " << h.value << '\n';
  std::cout << "  " << r.body << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " postgresql://user@host:port/db  (a database with pg_idempotency)\n";
    return 2;
  }
  idem::ClientOptions options;
  options.pool_size = 2;
  options.ttl = std::chrono::hours(24);
  idem::Client client(argv[1], options);

  // One-time set-up (a real service has its schema and topic already), through a client that lets
  // requests without a key run unguarded (allow_missing_key; the default refuses them with 400).
  idem::ClientOptions setup_options;
  setup_options.allow_missing_key = true;
  idem::Client setup(argv[1], setup_options);
  setup.run(idem::Request{"acme", "setup", "POST", "/setup", std::nullopt, "", {}}, [](idem::Attempt& a) {
    a.exec("CREATE TABLE IF NOT EXISTS example_orders (id bigserial PRIMARY KEY, tenant text, cart text,"
           " amount_cents integer)");
    a.exec("SELECT idem.create_topic('example.order_created')");
    return idem::Response{};
  });

  const std::string key = "example-" + std::to_string(std::time(nullptr)) + "-0000000000";
  try {
    print("first call", client.run(checkout_request(key), create_order));
    print("retry", client.run(checkout_request(key), create_order));   // X-Cache-Lookup: IDEMPOTENT-HIT
    idem::Request changed = checkout_request(key);
    changed.body = R"({"cart":"cart_42","amount_cents":2999})";
    print("same key, other body", client.run(changed, create_order));  // 422 problem+json
  } catch (const idem::OutcomeUnknown& e) {
    // The connection broke during COMMIT: answer 503 and let the client retry with the same key.
    print("outcome unknown", idem::problem_response(e, client.options()));
    return 1;
  } catch (const idem::ClientError& e) {
    print("error", idem::problem_response(e, client.options()));
    return 1;
  }
  return 0;
}
