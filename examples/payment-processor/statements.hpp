// Every SQL statement the processor runs, prepared on each new connection (prepare_statements).
// Values always travel as $n parameters, never spliced into the text.
#pragma once

#include <pqxx/pqxx>

namespace processor {
namespace stmt {

inline constexpr const char* kHealth = "processor_health";
inline constexpr const char* kKeyLock = "processor_key_lock";
inline constexpr const char* kKeyFind = "processor_key_find";
inline constexpr const char* kKeyStore = "processor_key_store";
inline constexpr const char* kChargeInsert = "processor_charge_insert";
inline constexpr const char* kChargeFind = "processor_charge_find";
inline constexpr const char* kChargeFindForUpdate = "processor_charge_find_for_update";
inline constexpr const char* kChargeList = "processor_charge_list";
inline constexpr const char* kChargeAuthorize = "processor_charge_authorize";
inline constexpr const char* kChargeAddRefunded = "processor_charge_add_refunded";
inline constexpr const char* kRefundInsert = "processor_refund_insert";
inline constexpr const char* kRefundFind = "processor_refund_find";
inline constexpr const char* kRefundList = "processor_refund_list";
inline constexpr const char* kReset = "processor_reset";

}  // namespace stmt

void prepare_statements(pqxx::connection& connection);

}  // namespace processor
