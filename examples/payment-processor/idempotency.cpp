// At-most-once execution per Idempotency-Key; see idempotency.hpp.
#include "idempotency.hpp"

#include <thread>

#include "ids.hpp"
#include "statements.hpp"

namespace processor {
namespace {

ApiResponse key_reused(const std::string& key) {
  return api_error(400, "idempotency_error", "idempotency_key_reused",
                   "Keys for idempotent requests can only be used with the same parameters they were first "
                   "used with. Try using a key other than '" + key + "' if you meant to execute a different request.");
}

}  // namespace

std::string request_fingerprint(const std::string& endpoint, const nlohmann::json& body) {
  return sha256_hex(endpoint + "\n" + body.dump());
}

KeyedAnswer execute_once(ConnectionPool& pool, const KeyedRequest& request,
                         std::chrono::milliseconds hold_before_executing, const Execution& execute) {
  return in_transaction(pool, [&](pqxx::work& tx) {
    tx.exec_prepared(stmt::kKeyLock, request.key);
    if (hold_before_executing.count() > 0) std::this_thread::sleep_for(hold_before_executing);

    const pqxx::result stored = tx.exec_prepared(stmt::kKeyFind, request.key);
    if (!stored.empty()) {
      const pqxx::row first = stored[0];
      if (first["fingerprint"].as<std::string>() != request.fingerprint) return KeyedAnswer{key_reused(request.key)};
      return KeyedAnswer{{first["response_status"].as<int>(), first["response_body"].as<std::string>()}, true};
    }

    KeyedAnswer answer{execute(tx)};
    tx.exec_prepared(stmt::kKeyStore, request.key, request.endpoint, request.fingerprint, answer.response.status,
                     answer.response.body);
    return answer;
  });
}

}  // namespace processor
