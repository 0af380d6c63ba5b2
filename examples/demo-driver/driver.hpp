// The demo's driver: real HTTP requests to the checkout service and the processor, database
// reads for what each step left behind, and one table row per check. `make demo` prints the
// table; `make test` runs the same steps and fails on any row whose result is not the expected one.
#pragma once

#include <httplib.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace demo {

struct Reply {
  int status = 0;  // 0: no HTTP answer (connection dropped, timed out)
  std::string body;
  httplib::Headers headers;
  std::string header(const std::string& name) const;
  nlohmann::json json() const;
};

struct Config {
  std::string service_url = "http://127.0.0.1:7400";
  std::string processor_url = "http://127.0.0.1:7401";
  std::string db_url;     // as postgres: for counts and the forensic queries
  std::string stack = "scripts/stack.sh";  // kills and restarts components
  std::string token;      // tenant acme, caller web
  std::string other_token;  // tenant globex, caller web
  bool plant = false;     // also plant a double charge and each discrepancy idem.reconcile names
};

class Driver {
 public:
  explicit Driver(Config config);

  // POST path with the caller's token (or none), the Idempotency-Key (or none), the body.
  Reply post(const std::string& path, const std::optional<std::string>& key, const std::string& body,
             const std::optional<std::string>& token, const httplib::Headers& extra = {});
  Reply processor(const std::string& method, const std::string& path, const std::string& body = "");
  // One value of a query (as postgres), as text ("" for NULL).
  std::string sql(const std::string& query);
  void stack(const std::string& args);

  // A table row: the step, what was expected and what happened; false rows fail the run.
  bool check(const std::string& step, const std::string& expected, const std::string& got);
  bool check(const std::string& step, bool ok, const std::string& expected, const std::string& got);
  void note(const std::string& step, const std::string& what);
  int failures() const { return failures_; }
  void print_table() const;

  // Checkout sessions that ended in an order (201/202), with the key that made it.
  void remember_order(const std::string& session, const std::string& key);
  std::size_t orders_made() const { return orders_.size(); }
  // Charges at the processor (succeeded or waiting for the buyer) for one checkout session.
  int charges_for(const std::string& session);

  // When the driver began (the database's clock): the window of the forensic queries.
  const std::string& started_at() const { return started_at_; }
  // The processor's export loaded into processor_export (examples/reconcile), then
  // idem.reconcile over this run: one "kind object_id" per discrepancy, in the report's order.
  std::vector<std::string> reconcile();

  const Config& config() const { return config_; }
  std::string unique(const std::string& prefix);

 private:
  struct Row {
    std::string step, expected, got;
    bool ok;
  };
  Config config_;
  std::string started_at_;
  std::vector<Row> rows_;
  int failures_ = 0;
  std::map<std::string, std::string> orders_;
  std::mutex mutex_;
  long counter_ = 0;
};

// The steps, in order (scenarios.cpp); each adds its rows.
void run_scenarios(Driver& d);
void plant_double_charge(Driver& d);
void plant_discrepancies(Driver& d);
void totals_and_forensics(Driver& d);

}  // namespace demo
