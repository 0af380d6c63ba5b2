// The crash workload's requests and how each answer is judged (traffic.hpp).
#include "traffic.hpp"

#include <variant>

#include "responses.hpp"

namespace crash {
namespace {

// Thrown by a handler that must not run (a replay check, a changed body): the violation is
// recorded first, and the throw rolls the attempt back so it leaves nothing behind.
struct HandlerMustNotRun {};

}  // namespace

template <typename F>
Answer Traffic::guarded(const KeySpec& key, F&& f) {
  try {
    return f();
  } catch (const HandlerMustNotRun&) {
    return Answer::result;
  } catch (const idem::OutcomeUnknown& e) {
    ledger_.failed(key, Failure::outcome_unknown, e.what());
  } catch (const idem::ConnectionLost& e) {
    ledger_.failed(key, Failure::connection_lost, e.what());
  } catch (const idem::PoolTimeout& e) {
    ledger_.failed(key, Failure::pool_timeout, e.what());
  } catch (const idem::LeaseLost& e) {
    ledger_.failed(key, Failure::lease_lost, e.what());
  } catch (const idem::ClientError& e) {
    ledger_.failed(key, Failure::database_error, e.what());
  } catch (const std::exception& e) {
    ledger_.failed(key, Failure::other, e.what());
  }
  return Answer::failed;
}

Answer Traffic::send(const KeySpec& key) {
  ledger_.touch(key);
  return guarded(key, [&] { return key.mode == Mode::run ? send_run(key) : send_lease(key); });
}

Answer Traffic::send_run(const KeySpec& key) {
  const idem::Response answer = client_.run(request_for(key), [&](idem::Attempt& a) {
    if (a.resumed()) ledger_.violation(key.name + ": a single-transaction key was resumed");
    return execute_order(a, key, run_id_, true);
  });
  return judge(key, answer);
}

Answer Traffic::send_lease(const KeySpec& key) {
  std::variant<idem::Lease, idem::Response> begun = client_.begin(request_for(key));
  if (const auto* early = std::get_if<idem::Response>(&begun)) {
    if (key.held && !ledger_.holder_checked(key.name) && !is_in_progress(*early)) {
      ledger_.violation(key.name + ": its holder died before completing, yet it answered " + describe(*early));
      return Answer::result;
    }
    return judge(key, *early);
  }
  idem::Lease& lease = std::get<idem::Lease>(begun);
  // A takeover continues from the last checkpoint: "charged" with this key's charge, or none.
  const bool charged_before = lease.resumed() && lease.recovery_point() == std::string(kChargedPoint);
  if (lease.resumed() && lease.recovery_point() && !charged_before) {
    ledger_.violation(key.name + ": resumed at an unknown recovery point " + *lease.recovery_point());
  }
  if (charged_before && !is_charge_data(key, lease.recovery_data())) {
    ledger_.violation(key.name + ": resumed with other recovery data than its checkpoint: " +
                      lease.recovery_data().value_or("(null)"));
  }
  if (key.held && !ledger_.holder_checked(key.name)) {
    if (!charged_before) {
      const std::string got =
          lease.resumed() ? "resumed at " + lease.recovery_point().value_or("(none)") : "acquired afresh";
      ledger_.violation(key.name + ": its holder checkpointed \"charged\" and died, but the next attempt was " + got);
    }
    ledger_.holder_checked(key, charged_before);
  } else if (charged_before) {
    ledger_.lease_resumed(key);
  }
  if (!charged_before) lease.checkpoint(kChargedPoint, charge_data(key), true);
  const idem::Response answer = lease.complete(
      [&](idem::Attempt& a) { return execute_order(a, key, run_id_, !charged_before); });
  return judge(key, answer);
}

Answer Traffic::judge(const KeySpec& key, const idem::Response& answer) {
  if (is_in_progress(answer)) {
    ledger_.in_progress();
    return Answer::in_progress;
  }
  ledger_.acknowledged(key, answer);  // a 422 or any other answer is a violation there
  return Answer::result;
}

Answer Traffic::probe_mismatch(const KeySpec& key) {
  ledger_.touch(key);
  return guarded(key, [&] {
    const idem::Response answer = client_.run(mismatched_request_for(key), [&](idem::Attempt&) -> idem::Response {
      ledger_.violation(key.name + ": a changed body ran the handler of an acknowledged key");
      throw HandlerMustNotRun{};
    });
    if (is_mismatch(answer)) {
      ledger_.mismatch_refused();
    } else {
      ledger_.violation(key.name + ": a changed body was answered " + describe(answer) + " instead of 422");
    }
    return Answer::result;
  });
}

Answer Traffic::verify_replay(const Acknowledged& first) {
  const KeySpec& key = first.key;
  ledger_.touch(key);
  return guarded(key, [&] {
    idem::Response answer = client_.run(request_for(key), [&](idem::Attempt&) -> idem::Response {
      ledger_.violation(key.name + ": acknowledged result lost: the key was free again (" +
                        describe(first.response) + ")");
      throw HandlerMustNotRun{};
    });
    idem::Response stripped = answer;
    if (!strip_replay_headers(stripped)) {
      ledger_.violation(key.name + ": acknowledged, but answered without replay headers: " + describe(answer));
    } else if (!same_response(stripped, first.response)) {
      ledger_.violation(key.name + ": replay differs from its acknowledged answer: acknowledged " +
                        describe(first.response) + ", replayed " + describe(answer));
    } else {
      ledger_.replay_verified();
    }
    return Answer::result;
  });
}

}  // namespace crash
