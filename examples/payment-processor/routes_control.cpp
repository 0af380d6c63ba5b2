// Test-only controls under /_control/ (fault injection, reset); see routes.hpp and faults.hpp.
#include <variant>

#include "requests.hpp"
#include "routes.hpp"
#include "statements.hpp"

namespace processor {
namespace {

constexpr int kMaxCount = 1000;
constexpr int64_t kMaxDelayMs = 60000;
constexpr int64_t kDefaultDelayMs = 2000;

ApiResponse invalid(const std::string& message, std::string_view param) {
  return api_error(400, "invalid_request_error", "parameter_invalid", message, param);
}

// {"mode", "count" (default 1), "delay_ms" (default 2000)}: arms the faults, answers what is armed.
ApiResponse arm_faults(FaultPlan& faults, const std::string& raw_body) {
  const auto body = parse_body(raw_body);
  if (const auto* bad = std::get_if<ApiResponse>(&body)) return *bad;
  const auto& json = std::get<nlohmann::json>(body);

  const auto mode = json.contains("mode") && json["mode"].is_string()
                        ? parse_fault_mode(json["mode"].get<std::string>())
                        : std::nullopt;
  if (!mode) return invalid("mode must be one of transient, timeout, slow, none", "mode");
  const auto count = json.value("count", nlohmann::json(1));
  if (!count.is_number_integer() || count.get<int64_t>() < 1 || count.get<int64_t>() > kMaxCount)
    return invalid("count must be an integer from 1 to 1000", "count");
  const auto delay = json.value("delay_ms", nlohmann::json(kDefaultDelayMs));
  if (!delay.is_number_integer() || delay.get<int64_t>() < 0 || delay.get<int64_t>() > kMaxDelayMs)
    return invalid("delay_ms must be an integer from 0 to 60000", "delay_ms");

  faults.arm(*mode, count.get<int>(), std::chrono::milliseconds(delay.get<int64_t>()));
  return json_response(200, faults.describe());
}

}  // namespace

void add_control_routes(httplib::Server& server, Context& context) {
  server.Post("/_control/faults", guarded([&context](const httplib::Request& req, httplib::Response& res) {
                reply(res, arm_faults(context.faults, req.body));
              }));
  server.Get("/_control/faults", guarded([&context](const httplib::Request&, httplib::Response& res) {
               reply(res, json_response(200, context.faults.describe()));
             }));
  // A fresh demo run: no charges, refunds or keys, nothing armed.
  server.Post("/_control/reset", guarded([&context](const httplib::Request&, httplib::Response& res) {
                in_transaction(context.pool, [](pqxx::work& tx) { return tx.exec_prepared(stmt::kReset); });
                context.faults.arm(FaultMode::none, 0, std::chrono::milliseconds(0));
                reply(res, json_response(200, Json{{"object", "reset"}, {"deleted", true}}));
              }));
}

}  // namespace processor
