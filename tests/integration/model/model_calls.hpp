// The statements the model runs and what comes back: the SQL, call() with its SQLSTATE and timing,
// column readers, printing, parsing an acquire row, and what the contract allows (Expect).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "tests/integration/model/model_state.hpp"
#include "tests/integration/pq.hpp"

namespace idem::it::model {

// ---------------------------------------------------------------------------------------------
// SQL. Every protocol call is bracketed by clock_timestamp() in the same statement (the target
// list is evaluated in order; OFFSET 0 keeps the call in its own subquery, evaluated once).

inline const std::string kAcquire =
    "SELECT (extract(epoch FROM s.t0) * 1000000)::bigint AS t0, (extract(epoch FROM s.t1) * 1000000)::bigint AS t1,"
    " (s.r).outcome AS outcome, (s.r).handle AS handle, (s.r).attempt AS attempt, (s.r).generation AS generation,"
    " (s.r).recovery_point AS recovery_point, (s.r).recovery_data::text AS recovery_data,"
    " (s.r).response_status AS response_status, (s.r).response_headers::text AS response_headers,"
    " (s.r).response_body AS response_body, (s.r).order_id AS order_id, (s.r).retry_after AS retry_after,"
    " (extract(epoch FROM (s.r).lease_expires_at) * 1000000)::bigint AS lease_end"
    " FROM (SELECT clock_timestamp() AS t0,"
    " idem.acquire($1, $2, $3::jsonb, lease => $4::interval, ttl => $5::interval, on_busy => $6) AS r,"
    " clock_timestamp() AS t1 OFFSET 0) s";
inline const std::string kCheckpoint =
    "SELECT (extract(epoch FROM s.t0) * 1000000)::bigint AS t0, (extract(epoch FROM s.t1) * 1000000)::bigint AS t1,"
    " (extract(epoch FROM s.v) * 1000000)::bigint AS v"
    " FROM (SELECT clock_timestamp() AS t0, idem.checkpoint($1, $2::bigint, $3, $4::jsonb) AS v,"
    " clock_timestamp() AS t1 OFFSET 0) s";
inline const std::string kComplete =
    "SELECT (extract(epoch FROM s.t0) * 1000000)::bigint AS t0, (extract(epoch FROM s.t1) * 1000000)::bigint AS t1,"
    " (s.v IS NULL) AS v"
    " FROM (SELECT clock_timestamp() AS t0, idem.complete($1, $2::bigint, $3::int, $4::jsonb, $5::bytea, $6) AS v,"
    " clock_timestamp() AS t1 OFFSET 0) s";
inline const std::string kRelease =
    "SELECT (extract(epoch FROM s.t0) * 1000000)::bigint AS t0, (extract(epoch FROM s.t1) * 1000000)::bigint AS t1,"
    " (s.v IS NULL) AS v"
    " FROM (SELECT clock_timestamp() AS t0, idem.release($1, $2::bigint, $3, $4::boolean) AS v, clock_timestamp() AS t1 OFFSET 0) s";
inline const std::string kPurge =
    "SELECT (extract(epoch FROM s.t0) * 1000000)::bigint AS t0, (extract(epoch FROM s.t1) * 1000000)::bigint AS t1,"
    " s.v AS n FROM (SELECT clock_timestamp() AS t0, idem.purge_expired($1::int) AS v,"
    " clock_timestamp() AS t1 OFFSET 0) s";
inline const std::string kRows =
    "SELECT tenant_id, encode(scope_digest, 'hex') AS digest, status, attempt, generation FROM idem.keys";
inline const std::string kRowText =
    "SELECT k::text AS row FROM idem.keys k WHERE k.tenant_id = $1 AND k.scope_digest = decode($2, 'hex')";
inline const std::string kAdvisoryHeld =
    "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = $1::int AND objsubid = 1"
    " AND ((classid::bigint << 32) | objid::bigint) = $2::bigint";
inline const std::string kRowLockProbe =
    "SELECT 1 FROM idem.keys WHERE tenant_id = $1 AND scope_digest = decode($2, 'hex') FOR UPDATE NOWAIT";
inline const std::string kServerNow = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now";

// A statement's answer: rows, or the error's SQLSTATE; and how long it took on the client.
struct Reply {
  std::optional<Result> rows;
  std::string state;
  std::string error;
  double seconds = 0;
  bool ok() const { return rows.has_value(); }
};

Reply call(Connection& c, const std::string& sql, const Params& params = {});

std::optional<std::string> opt_text(const Result& r, const char* column);

std::optional<std::int64_t> opt_int(const Result& r, const char* column);

std::string interval_of(Micros us);

std::string printable(const std::string& bytes);

std::string opt_str(const std::optional<std::string>& s);

std::string describe(const Response& r);

struct AcquireRow {
  std::string outcome, handle;
  std::optional<std::int64_t> attempt, generation, retry_after, lease_end;
  std::optional<std::string> rp, rdata;
  std::optional<Response> resp;  // set when response_status is not NULL
  bool any_response_column = false;
  Micros t0 = 0, t1 = 0;
};

AcquireRow parse_acquire(const Result& r);

// What the contract allows an acquire to answer.
struct Expect {
  std::string outcome;                   // an outcome, or "40001"
  int gen = -1;                          // -1: not checked
  bool write = false;                    // needs to write the record (so the key's lock)
  std::optional<std::string> rp, rdata;  // resumed
  std::optional<Response> resp;          // replay
  std::string why;
};

class ModelViolation : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace idem::it::model
