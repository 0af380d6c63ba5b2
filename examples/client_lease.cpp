// Multi-step use of idem::Client (docs/client.md): a refund that calls a payment processor. The
// lease is committed first, so no transaction stays open during the external call; a checkpoint
// records the processor's refund id, so a takeover after a crash resumes instead of refunding
// twice. Run: build/example_client_lease "postgresql://.../<a database with pg_idempotency>".
#include <ctime>
#include <iostream>
#include <string>
#include <variant>

#include "idem/client.hpp"

namespace {

// Stand-in for the processor's API: it deduplicates on the Idempotency-Key we send it.
struct Processor {
  std::string refund(const std::string& processor_idempotency_key, int amount_cents) {
    std::cout << "processor: refund " << amount_cents << " under key " << processor_idempotency_key << '\n';
    return "re_" + processor_idempotency_key.substr(5, 8);
  }
};

idem::Response refund(idem::Client& client, Processor& processor, const idem::Request& request) {
  std::variant<idem::Lease, idem::Response> begun = client.begin(request);
  if (auto* early = std::get_if<idem::Response>(&begun)) return *early;  // replay, 409, 422, 400
  idem::Lease& lease = std::get<idem::Lease>(begun);

  std::string refund_id;
  if (lease.resumed() && lease.recovery_point() == "refund_created") {
    // A previous attempt refunded and died before completing: do not refund again.
    refund_id = "(from the checkpoint) " + lease.recovery_data().value_or("");
  } else {
    try {
      refund_id = processor.refund(lease.handler_key(), 1999);
    } catch (const std::exception& e) {
      lease.release(e.what());  // transient: the next request with the key is a fresh attempt
      throw;
    }
    lease.checkpoint("refund_created", R"({"refund_id":")" + refund_id + R"("})");
  }
  // The last step's writes commit with the stored response.
  return lease.complete([&](idem::Attempt& a) {
    a.exec("INSERT INTO example_refunds (refund_id, amount_cents) VALUES ($1, 1999)", {refund_id});
    idem::Response r;
    r.status = 201;
    r.headers = {{"Content-Type", "application/json"}};
    r.body = R"({"refund_id":")" + refund_id + R"("})";
    return r;
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " postgresql://user@host:port/db  (a database with pg_idempotency)\n";
    return 2;
  }
  idem::ClientOptions setup_options;
  setup_options.allow_missing_key = true;
  idem::Client setup(argv[1], setup_options);
  setup.run(idem::Request{"acme", "setup", "POST", "/setup", std::nullopt, "", {}}, [](idem::Attempt& a) {
    a.exec("CREATE TABLE IF NOT EXISTS example_refunds (refund_id text PRIMARY KEY, amount_cents integer)");
    return idem::Response{};
  });

  idem::ClientOptions options;
  options.lease = std::chrono::seconds(60);  // longer than the processor call may take
  idem::Client client(argv[1], options);
  Processor processor;
  idem::Request request;
  request.tenant = "acme";
  request.caller = "support-console";
  request.method = "POST";
  request.route = "/v1/payments/pay_1/refunds";
  request.idempotency_key = "refund-" + std::to_string(std::time(nullptr)) + "-000000000";
  request.body = R"({"amount_cents":1999})";
  try {
    for (const char* label : {"first call", "retry"}) {
      const idem::Response r = refund(client, processor, request);
      std::cout << label << ": " << r.status << ' ' << r.body
                << (r.header("Idempotent-Replayed") ? " (replayed)" : "") << '\n';
    }
  } catch (const idem::LeaseLost& e) {
    // This attempt outlived its lease and another took over: answer 503, record nothing.
    std::cout << idem::problem_response(e, client.options()).body << '\n';
    return 1;
  } catch (const idem::ClientError& e) {
    std::cout << idem::problem_response(e, client.options()).body << '\n';
    return 1;
  }
  return 0;
}
