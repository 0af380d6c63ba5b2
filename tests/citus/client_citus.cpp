// idem::Client with ClientOptions::citus through a Citus coordinator (tests/citus/citus_test.sh
// runs it): run() in one transaction on the tenant's node and its replay, and a Lease's
// checkpoint, release, resumption and complete, for a tenant given on the command line. Without
// the option, the handle forms would be refused (ERR_TENANT_NOT_LOCAL), which it checks too.
// usage: client_citus URL TENANT   (a database citus_test.sh distributed, with table orders)
#include <ctime>
#include <iostream>
#include <string>
#include <variant>

#include "idem/client.hpp"

namespace {

int checks = 0, fails = 0;
void check(const std::string& name, const std::string& want, const std::string& got) {
  ++checks;
  if (want == got) {
    std::cout << "ok: " << name << '\n';
  } else {
    ++fails;
    std::cout << "FAILED: " << name << ": want '" << want << "', got '" << got << "'\n";
  }
}

idem::Request request(const std::string& tenant, const std::string& key, const std::string& body) {
  idem::Request r;
  r.tenant = tenant;
  r.caller = "client-citus";
  r.method = "POST";
  r.route = "/v1/orders";
  r.idempotency_key = key;
  r.body = body;
  return r;
}

std::string header(const idem::Response& r, const char* name) {
  const std::string* v = r.header(name);
  return v == nullptr ? "" : *v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " URL TENANT\n";
    return 2;
  }
  const std::string url = argv[1], tenant = argv[2];
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

  std::cout << "client_citus: " << checks - fails << " of " << checks << " checks passed\n";
  return fails == 0 ? 0 : 1;
}
