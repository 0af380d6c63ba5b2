// Argument values: by name first (the argument's meaning), else by type (the type's edge cases).
#include "tests/fuzz_sql/values.hpp"

#include <cstdint>
#include <string>

#include "tests/fuzz_sql/strings.hpp"

namespace idem::fuzz_sql {
namespace {

const char* const kTenants[] = {"acme", "globex", "t1", "tenant-\xc3\xa9"};
const char* const kCallers[] = {"", "checkout", "svc", "POST /v1/orders", "refunds"};
const char* const kStates[] = {"created", "confirmed", "shipped", "cancelled", "refunded", "authorized",
                               "captured", "voided", "failed", "partially_refunded", "nowhere"};
const char* const kTopics[] = {"orders.created", "payments.captured", "fuzz.topic"};
const char* const kConsumers[] = {"c1", "c2", "fuzz-consumer"};
const char* const kErrorNames[] = {"ERR_LEASE_LOST", "ERR_ARGUMENT_INVALID", "ERR_IDEMPOTENCY_IN_PROGRESS",
                                   "ERR_OUTBOX_EVENT_UNKNOWN", "ERR_INTERNAL", "ERR_OUT_OF_MEMORY",
                                   "ERR_NOT_A_NAME", "err_lease_lost"};
const char* const kPointers[] = {"/metadata/trace_id", "/amount", "", "a", "/~2", "/~", "/~0/~1", "/0",
                                 "/-", "/", "//", "/metadata"};

bool is_text(const Type& t) { return t.base == "text" || t.base == "character varying" || t.base == "name"; }
bool is_int(const Type& t) { return t.base == "integer" || t.base == "bigint" || t.base == "smallint"; }

std::string strip_prefix(const std::string& name) {
  return name.rfind("p_", 0) == 0 ? name.substr(2) : name;
}

std::string cast(const std::string& literal, const std::string& type) {
  return "CAST(" + literal + " AS " + type + ")";
}

}  // namespace

void ValueMaker::begin_call() {
  holder_.reset();
  if (!rng_.chance(4)) holder_ = pools_.pick_holder(rng_);
}

Value ValueMaker::null(const Type& type) const { return {cast("NULL", type.name), std::nullopt}; }

Value ValueMaker::text_value(const std::string& type, const std::string& text) {
  return {cast(quote_literal(text), type), text};
}

Value ValueMaker::make(const Type& type, const std::string& arg_name, bool hostile) {
  hostile_ = hostile;
  const std::string name = strip_prefix(arg_name);
  if (rng_.chance(hostile ? 8 : 60)) return null(type);
  if (!hostile || rng_.chance(3)) {
    bool handled = false;
    Value v = by_name(type, name, handled);
    if (handled) return v;
  }
  return hostile ? edge(type, name) : benign(type, name);
}

Value ValueMaker::by_name(const Type& type, const std::string& name, bool& handled) {
  handled = true;
  auto pooled = [&](const char* kind, const std::string& fallback) {
    auto v = pools_.pick(kind, rng_);
    return v && !rng_.chance(4) ? *v : fallback;
  };
  if (is_text(type)) {
    if (name == "handle") {
      auto h = holder_ && !rng_.chance(5) ? std::optional<std::string>(holder_->handle) : pools_.pick("handle", rng_);
      if (!h) return text_value(type.name, hostile_ ? hostile_text(rng_) : "acme:" + random_hex(rng_, 32));
      return text_value(type.name, hostile_ ? mangled_handle(rng_, *h) : *h);
    }
    if (name == "tenant" || name == "tenant_id") return text_value(type.name, pooled("tenant", rng_.pick(kTenants)));
    if (name == "key") return text_value(type.name, idempotency_key(rng_));
    if (name == "role") {
      static const char* const kRoles[] = {"fuzz_service", "fuzz_consumer", "fuzz_operator", "fuzz_auditor",
                                           "idem_service", "postgres", "no_such_role"};
      return text_value(type.name, rng_.pick(kRoles));
    }
    if (name == "payload") return text_value(type.name, json_document(rng_, !hostile_));
    if (name == "caller" || name == "resource") return text_value(type.name, rng_.pick(kCallers));
    if (name == "on_busy") return text_value(type.name, rng_.chance(5) ? "wait" : "reject");
    if (name == "mutation_type" || name == "type") {
      static const char* const kTypes[] = {"create", "capture", "refund", "void", "delete"};
      return text_value(type.name, rng_.pick(kTypes));
    }
    if (name == "machine") return text_value(type.name, rng_.chance(2) ? "order" : "payment");
    if (name == "from_state" || name == "to_state") return text_value(type.name, rng_.pick(kStates));
    if (name == "topic") return text_value(type.name, pooled("topic", rng_.pick(kTopics)));
    if (name == "consumer") return text_value(type.name, pooled("consumer", rng_.pick(kConsumers)));
    if (name == "kind") {
      static const char* const kKinds[] = {"std", "int", "pg", "idem", "bad_alloc", "other"};
      return text_value(type.name, rng_.pick(kKinds));
    }
    if (name == "name") return text_value(type.name, rng_.pick(kErrorNames));
    if (name == "action") {
      static const char* const kActions[] = {"checkpoint", "complete", "release", "resolve_stuck"};
      return text_value(type.name, rng_.pick(kActions));
    }
    if (name == "outcome") {
      static const char* const kOutcomes[] = {"acquired", "resumed", "replay", "in_progress", "mismatch",
                                              "completed", "released", "checkpoint"};
      return text_value(type.name, rng_.pick(kOutcomes));
    }
    if (name == "status") {
      static const char* const kStatus[] = {"in_progress", "resolved", "released", "absent"};
      return text_value(type.name, rng_.pick(kStatus));
    }
    if (name == "recovery_point") return text_value(type.name, rng_.chance(2) ? "charge_created" : "step_1");
    if (name == "order_id") return text_value(type.name, pooled("order_id", "ord_1"));
    if (name == "mode") {
      static const char* const kModes[] = {"claim", "ack", "nack", "share", "update", "key share"};
      return text_value(type.name, rng_.pick(kModes));
    }
    if (name == "reason" || name == "error" || name == "description" || name == "message" ||
        name == "hint" || name == "local_status") {
      return text_value(type.name, hostile_ ? hostile_text(rng_) : "fuzz");
    }
  }
  if (type.base == "jsonb" || type.base == "json") {
    if (name == "payload" || name == "data" || name == "handler_response") {
      return text_value(type.name, json_document(rng_, !hostile_));
    }
    if (name == "headers") {
      return text_value(type.name, rng_.chance(4) ? json_document(rng_, false) : "{\"Content-Type\":\"application/json\"}");
    }
    if (name == "row_data" || name == "row") {
      return text_value(type.name, std::string("{\"stock_available\":") + (rng_.chance(2) ? "true" : "false") +
                                       ",\"captured\":" + (rng_.chance(2) ? "true" : "false") + "}");
    }
  }
  if (is_int(type)) {
    if (name == "attempt") {
      if (holder_ && !hostile_ && !rng_.chance(5)) return {cast(holder_->attempt, type.name), holder_->attempt};
      auto a = holder_ ? std::optional<std::string>(holder_->attempt) : pools_.pick("attempt", rng_);
      if (a) {
        // Hostile: the token next to the real one (an older or a future attempt).
        const long long delta = hostile_ ? (rng_.chance(2) ? 1 : -1) : 0;
        const std::string v = std::to_string(std::stoll(*a) + delta);
        return {cast(v, type.name), v};
      }
    }
    if (name == "event_id") {
      auto e = pools_.pick("event_id", rng_);
      if (e) return {cast(*e, type.name), *e};
    }
    if (name == "status") {
      const std::string v = std::to_string(100 + rng_.below(500));
      return {cast(v, type.name), v};
    }
    if (name == "batch" || name == "max_attempts") {
      const std::string v = std::to_string(1 + rng_.below(name == "batch" ? 1000 : 10));
      return {cast(v, type.name), v};
    }
    if (name == "generation") {
      const std::string v = std::to_string(1 + rng_.below(3));
      return {cast(v, type.name), v};
    }
  }
  if (type.base == "bytea" && (name == "payload_hash" || name == "scope_digest" || name == "digest" || name == "hash")) {
    auto d = pools_.pick("digest", rng_);
    const std::string hex = d && !rng_.chance(3) ? *d : random_hex(rng_, 32);
    return {cast(quote_literal("\\x" + hex), type.name), std::nullopt};
  }
  if (type.base == "uuid" && name == "token") {
    auto t = pools_.pick("token", rng_);
    if (t) return {cast(quote_literal(*t), type.name), *t};
  }
  handled = false;
  return {};
}

Value ValueMaker::edge(const Type& type, const std::string& name) {
  const std::string& b = type.base;
  if (type.category == 'A') return array(type, name);
  if (type.category == 'C') return composite(type);
  if (is_text(type) || b == "character") return text_value(type.name, hostile_text(rng_));
  if (b == "jsonb" || b == "json") return text_value(type.name, json_document(rng_, false));
  if (is_int(type)) {
    const std::string v = integer(b);
    return {cast(v, type.name), v};
  }
  if (b == "boolean") return {rng_.chance(2) ? "true" : "false", std::nullopt};
  if (b == "bytea") {
    static const std::size_t kLengths[] = {0, 1, 16, 31, 32, 32, 33, 64, 1024 * 1024};
    return {cast(quote_literal("\\x" + random_hex(rng_, rng_.pick(kLengths))), type.name), std::nullopt};
  }
  if (b == "interval") return {cast(quote_literal(interval()), type.name), std::nullopt};
  if (b == "timestamp with time zone" || b == "timestamp without time zone" || b == "date") {
    return {cast(quote_literal(timestamp()), type.name), std::nullopt};
  }
  if (b == "uuid") return {cast(quote_literal(uuid()), type.name), std::nullopt};
  if (b == "xid") {
    if (rng_.chance(4)) return {"CAST(pg_current_xact_id() AS xid)", std::nullopt};
    static const char* const kXids[] = {"0", "1", "2", "3", "4294967295", "-1", "abc"};
    const std::string v = rng_.chance(2) ? rng_.pick(kXids) : std::to_string(rng_.next() % 4294967296ULL);
    return {cast(quote_literal(v), type.name), std::nullopt};
  }
  if (b == "numeric" || b == "double precision" || b == "real") {
    static const char* const kNumbers[] = {"0", "-0", "1e308", "NaN", "Infinity", "-1", "1e-400", "123.456"};
    return {cast(quote_literal(rng_.pick(kNumbers)), type.name), std::nullopt};
  }
  return rng_.chance(2) ? null(type) : Value{cast(quote_literal(hostile_text(rng_)), type.name), std::nullopt};
}

Value ValueMaker::benign(const Type& type, const std::string& name) {
  const std::string& b = type.base;
  if (type.category == 'A') return array(type, name);
  if (type.category == 'C') return composite(type);
  if (is_text(type) || b == "character") return text_value(type.name, "fuzz-" + std::to_string(rng_.below(100)));
  if (b == "jsonb" || b == "json") return text_value(type.name, json_document(rng_, true));
  if (is_int(type)) {
    auto pooled = b == "bigint" ? pools_.pick(rng_.chance(2) ? "attempt" : "event_id", rng_) : std::nullopt;
    const std::string v = pooled ? *pooled : std::to_string(1 + rng_.below(100));
    return {cast(v, type.name), v};
  }
  if (b == "boolean") return {rng_.chance(2) ? "true" : "false", std::nullopt};
  if (b == "bytea") return {cast(quote_literal("\\x" + random_hex(rng_, 32)), type.name), std::nullopt};
  if (b == "interval") return {cast(quote_literal(interval()), type.name), std::nullopt};
  if (b == "timestamp with time zone" || b == "timestamp without time zone" || b == "date") {
    return {"CAST(now() AS " + type.name + ")", std::nullopt};
  }
  if (b == "uuid") return {cast(quote_literal(uuid()), type.name), std::nullopt};
  if (b == "xid") return {"CAST(pg_current_xact_id() AS xid)", std::nullopt};
  if (b == "numeric" || b == "double precision" || b == "real") return {cast("1", type.name), std::nullopt};
  return null(type);
}

std::string ValueMaker::integer(const std::string& type_name) {
  static const char* const kInt4[] = {"0", "1", "-1", "2", "99", "100", "101", "199", "200", "201", "204",
                                      "409", "422", "500", "599", "600", "1000", "10000", "10001",
                                      "100000", "100001", "128", "129", "2147483647", "-2147483648"};
  static const char* const kInt8[] = {"2147483648", "-2147483649", "4294967296", "9223372036854775807",
                                      "-9223372036854775808"};
  if (type_name == "bigint" && rng_.chance(4)) {
    if (auto a = pools_.pick(rng_.chance(2) ? "attempt" : "event_id", rng_)) return *a;
    return rng_.pick(kInt8);
  }
  if (type_name == "smallint" && rng_.chance(3)) return rng_.chance(2) ? "32767" : "-32768";
  if (rng_.chance(40)) return type_name == "bigint" ? "9223372036854775808" : "2147483648";  // 22003
  if (rng_.chance(3)) return std::to_string(rng_.below(1000));
  return rng_.pick(kInt4);
}

std::string ValueMaker::interval() {
  static const char* const kPlausible[] = {"1 second", "2 seconds", "30 seconds", "5 minutes", "1 hour",
                                           "1 day", "7 days", "90 days"};
  static const char* const kHostile[] = {
      "0", "1 microsecond", "-1 s", "1 hour 1 microsecond", "90 days 1 second", "1 mon", "1 year",
      "1000000 years", "-1000000 years", "178000000 years", "-178000000 years", "2147483647 days",
      "-2147483648 days", "2147483647 mons", "9223372036854775807 microseconds", "1 day -86400 seconds",
      "1 mon -30 days", "00:00:00.000001", "P1Y2M3DT4H5M6S", "soon", "infinity", "-00:00:01",
      "2562047788 hours", "1 century", "1 millennium -1000 years", "@ 1 minute ago"};
  if (!hostile_ || rng_.chance(3)) return rng_.pick(kPlausible);
  return rng_.pick(kHostile);
}

std::string ValueMaker::timestamp() {
  static const char* const kTimes[] = {"now", "infinity", "-infinity", "epoch", "4713-01-01 00:00:00+00 BC",
                                       "294276-12-31 23:59:59+00", "2000-01-01", "2100-01-01",
                                       "yesterday", "tomorrow", "not a time", "2000-02-30"};
  return rng_.pick(kTimes);
}

std::string ValueMaker::uuid() {
  if (auto t = pools_.pick("token", rng_); t && rng_.chance(2)) return *t;
  static const char* const kUuids[] = {"00000000-0000-0000-0000-000000000000",
                                       "ffffffff-ffff-ffff-ffff-ffffffffffff", "not-a-uuid", ""};
  if (hostile_ && rng_.chance(3)) return rng_.pick(kUuids);
  const std::string h = random_hex(rng_, 16);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-4" + h.substr(13, 3) + "-a" + h.substr(17, 3) + "-" + h.substr(20, 12);
}

Value ValueMaker::array(const Type& type, const std::string& name) {
  if (!type.element) return null(type);
  const Type& element = *type.element;
  auto item = [&]() -> std::string {
    if (name == "exclude") {
      return cast(quote_literal(hostile_ ? rng_.pick(kPointers) : "/metadata/trace_id"), element.name);
    }
    if (name == "topics") {
      auto t = pools_.pick("topic", rng_);
      return text_value(element.name, t && !rng_.chance(4) ? *t : rng_.pick(kTopics)).sql;
    }
    if (name == "event_ids" || name == "ids" || name == "positions") {
      if (auto e = pools_.pick("event_id", rng_)) return cast(*e, element.name);
    }
    return (hostile_ ? edge(element, name) : benign(element, name)).sql;
  };
  if (!hostile_) {
    std::string sql = "ARRAY[";
    const std::size_t n = 1 + rng_.below(3);
    for (std::size_t i = 0; i < n; ++i) sql += (i ? "," : "") + item();
    return {sql + "]", std::nullopt};
  }
  switch (rng_.below(8)) {
    case 0: return null(type);
    case 1: return {cast("'{}'", type.name), std::nullopt};
    case 2: return {"ARRAY[ARRAY[" + item() + "],ARRAY[" + item() + "]]", std::nullopt};  // 2-D: 2202E
    case 3: return {"array_fill(" + item() + ", ARRAY[" + std::to_string(1 + rng_.below(10000)) + "])", std::nullopt};
    case 4: return {"ARRAY[" + item() + "," + cast("NULL", element.name) + "]", std::nullopt};
    default: {
      std::string sql = "ARRAY[";
      const std::size_t n = 1 + rng_.below(4);
      for (std::size_t i = 0; i < n; ++i) sql += (i ? "," : "") + item();
      return {sql + "]", std::nullopt};
    }
  }
}

Value ValueMaker::composite(const Type& type) {
  if (rng_.chance(4)) return null(type);
  if (!type.table.empty() && rng_.chance(2)) {
    // A real row (NULL when the table is empty); services cannot read our tables (42501).
    return {"(SELECT r FROM " + type.table + " r OFFSET " + std::to_string(rng_.below(8)) + " LIMIT 1)", std::nullopt};
  }
  std::string sql = "ROW(";
  for (std::size_t i = 0; i < type.fields.size(); ++i) {
    const bool hostile = hostile_;
    sql += (i ? "," : "") + make(type.fields[i].second, type.fields[i].first, hostile && rng_.chance(3)).sql;
    hostile_ = hostile;
  }
  return {sql + ")::" + type.name, std::nullopt};
}

std::string ValueMaker::wrong_type(const Type& type) {
  static const std::pair<const char*, const char*> kOthers[] = {
      {"integer", "CAST(42 AS integer)"}, {"point", "CAST('(1,2)' AS point)"}, {"boolean", "true"},
      {"jsonb", "CAST('{}' AS jsonb)"}, {"bytea", "CAST('\\x00' AS bytea)"}, {"text", "CAST('x' AS text)"},
      {"date", "CAST('2000-01-01' AS date)"}, {"integer[]", "ARRAY[1,2]"}, {"numeric", "CAST(1.5 AS numeric)"},
      {"unknown", "NULL"}, {"unknown", "'untyped'"}};
  for (;;) {
    const auto& other = rng_.pick(kOthers);
    if (type.name != other.first) return other.second;
  }
}

}  // namespace idem::fuzz_sql
