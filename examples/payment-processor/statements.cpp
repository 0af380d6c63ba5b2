// The processor's SQL; see statements.hpp. Charge and refund rows are always read with the same
// columns, so charges.cpp and refunds.cpp turn any of them into JSON the same way.
#include "statements.hpp"

#include <string>
#include <utility>
#include <vector>

namespace processor {
namespace {

const std::string kChargeColumns =
    "id, amount_cents, amount_refunded_cents, currency, source, description, status, failure_code,"
    " idempotency_key, floor(extract(epoch FROM created_at))::bigint AS created, metadata::text AS metadata";  // whole seconds, as Stripe
const std::string kRefundColumns =
    "id, charge_id, amount_cents, currency, status, idempotency_key,"
    " floor(extract(epoch FROM created_at))::bigint AS created";

const std::vector<std::pair<const char*, std::string>> kStatements = {
    {stmt::kHealth, "SELECT 1"},
    // A pair of int4 keys: its own lock space, apart from single-bigint advisory locks other
    // programs in the same database may take. 'PROC' namespaces it among pairs.
    {stmt::kKeyLock, "SELECT pg_advisory_xact_lock(x'50524f43'::int, hashtext($1))"},
    {stmt::kKeyFind,
     "SELECT endpoint, fingerprint, response_status, response_body FROM processor.idempotency_keys"
     " WHERE key = $1 AND expires_at > now()"},
    {stmt::kKeyStore,
     "INSERT INTO processor.idempotency_keys"
     " (key, endpoint, fingerprint, response_status, response_body, expires_at)"
     " VALUES ($1, $2, $3, $4, $5, now() + interval '31 days')"
     " ON CONFLICT (key) DO UPDATE SET endpoint = EXCLUDED.endpoint, fingerprint = EXCLUDED.fingerprint,"
     " response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body,"
     " created_at = now(), expires_at = EXCLUDED.expires_at"},
    {stmt::kChargeInsert,
     "INSERT INTO processor.charges"
     " (id, amount_cents, currency, source, description, metadata, status, failure_code, idempotency_key)"
     " VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9) RETURNING " + kChargeColumns},
    {stmt::kChargeFind, "SELECT " + kChargeColumns + " FROM processor.charges WHERE id = $1"},
    {stmt::kChargeFindForUpdate, "SELECT " + kChargeColumns + " FROM processor.charges WHERE id = $1 FOR UPDATE"},
    {stmt::kChargeList,
     "SELECT " + kChargeColumns + " FROM processor.charges"
     " WHERE ($1::text IS NULL OR idempotency_key = $1) AND ($2::bigint IS NULL OR floor(extract(epoch FROM created_at))::bigint >= $2)"
     " AND ($3::text IS NULL OR seq > (SELECT s.seq FROM processor.charges s WHERE s.id = $3))"
     " ORDER BY seq LIMIT $4::bigint"},
    {stmt::kChargeAuthorize,
     "UPDATE processor.charges SET status = 'succeeded' WHERE id = $1 AND status = 'requires_action'"},
    {stmt::kChargeAddRefunded,
     "UPDATE processor.charges SET amount_refunded_cents = amount_refunded_cents + $2 WHERE id = $1"},
    {stmt::kRefundInsert,
     "INSERT INTO processor.refunds (id, charge_id, amount_cents, currency, status, idempotency_key)"
     " VALUES ($1, $2, $3, $4, 'succeeded', $5) RETURNING " + kRefundColumns},
    {stmt::kRefundFind, "SELECT " + kRefundColumns + " FROM processor.refunds WHERE id = $1"},
    {stmt::kRefundList,
     "SELECT " + kRefundColumns + " FROM processor.refunds"
     " WHERE ($1::text IS NULL OR idempotency_key = $1) AND ($2::text IS NULL OR charge_id = $2)"
     " AND ($3::bigint IS NULL OR floor(extract(epoch FROM created_at))::bigint >= $3)"
     " AND ($4::text IS NULL OR seq > (SELECT s.seq FROM processor.refunds s WHERE s.id = $4))"
     " ORDER BY seq LIMIT $5::bigint"},
    {stmt::kReset, "TRUNCATE processor.refunds, processor.charges, processor.idempotency_keys"},
};

}  // namespace

void prepare_statements(pqxx::connection& connection) {
  for (const auto& [name, sql] : kStatements) connection.prepare(name, sql);
}

}  // namespace processor
