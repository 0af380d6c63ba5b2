// The two request flows of the failover workload; see attempts.hpp.
#include "tests/failover/attempts.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>
#include <variant>

namespace idem::failover {
namespace {

Outcome acknowledged(const Response& r) {
  Outcome o;
  o.type = Outcome::Type::acknowledged;
  o.answer = answer_of(r, &o.replayed);
  return o;
}

Outcome not_done(Outcome::Type type, const std::string& why, bool outcome_unknown = false) {
  Outcome o;
  o.type = type;
  o.why = why;
  o.outcome_unknown = outcome_unknown;
  return o;
}

std::mt19937_64& rng() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

void pause(const Pacing& p) {
  std::uniform_int_distribution<long> ms(p.min_step.count(), p.max_step.count());
  std::this_thread::sleep_for(std::chrono::milliseconds(ms(rng())));
}

std::string why_unknown(const OutcomeUnknown& e) { return std::string(e.what()) + " (" + e.cause() + ")"; }

// The answer a caller got without an exception: 2xx done, 409 busy, anything else unexpected.
Outcome answered(const Response& r) {
  if (r.status >= 200 && r.status < 300) return acknowledged(r);
  if (r.status == 409) return not_done(Outcome::Type::busy, "409 in progress");
  return not_done(Outcome::Type::unexpected, std::to_string(r.status) + " " + r.body);
}

// The handler's business write and answer, inside the transaction that completes the key.
Response execute(Attempt& a, const KeySpec& spec, const std::string& charge_id, std::string& execution_id) {
  execution_id = new_execution_id();
  a.exec(kInsertExecution, {spec.key, kind_name(spec.kind), execution_id, std::to_string(spec.round)});
  return response_for(spec, execution_id, charge_id);
}

Outcome run_once(Client& client, const KeySpec& spec) {
  std::string execution_id;  // the handler's last run in this request
  try {
    return answered(client.run(request_of(spec), [&](Attempt& a) { return execute(a, spec, "-", execution_id); }));
  } catch (const LeaseLost& e) {
    return not_done(Outcome::Type::fenced, e.what());
  } catch (const OutcomeUnknown& e) {
    Outcome o = not_done(Outcome::Type::unresolved, why_unknown(e), true);
    o.in_doubt_execution = execution_id;
    return o;
  } catch (const ClientError& e) {  // ConnectionLost, PoolTimeout, DatabaseError while it fails over
    return not_done(Outcome::Type::unresolved, e.what());
  } catch (const std::exception& e) {
    return not_done(Outcome::Type::unexpected, e.what());
  }
}

// A holder's step, retried while the cluster fails over (the holder carries on against the new
// primary; `repeated` counts the steps sent again). nullopt: it succeeded. repeatable: a step
// whose second run is harmless when the first one's fate is unknown (checkpoint, handler_key);
// complete is not — its OutcomeUnknown ends here.
template <typename F>
std::optional<Outcome> holder_step(const Pacing& pacing, bool repeatable, int& repeated, F&& step) {
  const auto deadline = std::chrono::steady_clock::now() + pacing.step_deadline;
  bool stall = std::uniform_real_distribution<double>(0, 1)(rng()) < pacing.stall_share;
  for (;;) {
    std::string why;
    try {
      step();
      return std::nullopt;
    } catch (const LeaseLost& e) {
      return not_done(Outcome::Type::fenced, e.what());
    } catch (const OutcomeUnknown& e) {
      if (!repeatable) return not_done(Outcome::Type::unresolved, why_unknown(e), true);
      why = why_unknown(e);
    } catch (const ClientError& e) {
      why = e.what();
    } catch (const std::exception& e) {
      return not_done(Outcome::Type::unexpected, e.what());
    }
    if (std::chrono::steady_clock::now() >= deadline) return not_done(Outcome::Type::unresolved, why);
    std::this_thread::sleep_for(stall ? pacing.stall : std::chrono::milliseconds(200));
    stall = false;
    ++repeated;
  }
}

std::optional<std::string> recorded_charge(const Lease& lease) {
  if (!lease.resumed() || !lease.recovery_data()) return std::nullopt;
  const auto data = nlohmann::json::parse(*lease.recovery_data(), nullptr, false);
  if (!data.is_object() || !data.contains("charge_id") || !data["charge_id"].is_string()) return std::nullopt;
  return data["charge_id"].get<std::string>();
}

// After begin: the processor's steps with their checkpoints, then the completion.
Outcome lease_steps(Lease& lease, const KeySpec& spec, const Pacing& pacing, int& repeated) {
  // The processor's idempotency key is the same for every attempt of this generation, so the
  // charge id derived from it is too: a takeover's recorded charge must be the one it derives.
  std::string charge_id;
  if (auto failed = holder_step(pacing, true, repeated, [&] { charge_id = "ch_" + lease.handler_key(); })) {
    return *failed;
  }
  const std::optional<std::string> recorded = recorded_charge(lease);
  if (recorded && *recorded != charge_id) {
    return not_done(Outcome::Type::unexpected, "resumed with charge " + *recorded + ", handler key gives " + charge_id);
  }
  const std::string data = R"({"charge_id":")" + charge_id + R"("})";
  if (!recorded) {
    pause(pacing);  // the processor charges
    if (auto failed = holder_step(pacing, true, repeated, [&] { lease.checkpoint("charged", data); })) return *failed;
  }
  pause(pacing);  // the processor confirms
  if (auto failed = holder_step(pacing, true, repeated, [&] { lease.checkpoint("confirmed", data); })) return *failed;
  Response response;
  std::string execution_id;
  if (auto failed = holder_step(pacing, false, repeated, [&] {
        response = lease.complete([&](Attempt& a) { return execute(a, spec, charge_id, execution_id); });
      })) {
    if (failed->outcome_unknown) failed->in_doubt_execution = execution_id;
    return *failed;
  }
  return acknowledged(response);
}

Outcome lease_once(Client& client, const KeySpec& spec, const Pacing& pacing) {
  std::optional<std::variant<Lease, Response>> begun;
  try {
    begun.emplace(client.begin(request_of(spec)));
  } catch (const OutcomeUnknown& e) {
    return not_done(Outcome::Type::unresolved, why_unknown(e), true);
  } catch (const ClientError& e) {
    return not_done(Outcome::Type::unresolved, e.what());
  }
  if (const auto* early = std::get_if<Response>(&*begun)) return answered(*early);
  Lease& lease = std::get<Lease>(*begun);
  int repeated = 0;
  Outcome o = lease_steps(lease, spec, pacing, repeated);
  o.repeated_steps = repeated;
  return o;
}

}  // namespace

const char* type_name(Outcome::Type type) {
  switch (type) {
    case Outcome::Type::acknowledged: return "acknowledged";
    case Outcome::Type::busy: return "busy";
    case Outcome::Type::unresolved: return "unresolved";
    case Outcome::Type::fenced: return "fenced";
    case Outcome::Type::unexpected: return "unexpected";
  }
  return "?";
}

Outcome perform(Client& client, const KeySpec& spec, const Pacing& pacing) {
  return spec.kind == Kind::run ? run_once(client, spec) : lease_once(client, spec, pacing);
}

}  // namespace idem::failover
