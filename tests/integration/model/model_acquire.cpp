// ModelRun: acquire, what the contract allows it to answer, and the single-holder and
// no-lock-after-refusal checks.
#include "tests/integration/model/model_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace idem::it::model {

// ------------------------------------------------------------------------------ acquire

std::vector<Expect> ModelRun::base_outcomes(const Rec& v, bool own, int variant, Micros t0, Micros t1) const {
  std::vector<Expect> out;
  if (!v.exists) {
    out.push_back(Expect{"acquired", v.hwm + 1, true, {}, {}, {}, "no record"});
    return out;
  }
  const Window h = history_at(v);
  if (h.lo <= t1 + kSlack) out.push_back(Expect{"acquired", v.gen + 1, true, {}, {}, {}, "history"});
  if (own && v.status == St::in_progress) {
    // The contract names both rules (history -> a new generation; this transaction's own
    // in_progress record -> in_progress) without ranking them: either answer is accepted.
    out.push_back(Expect{"in_progress", -1, false, {}, {}, {}, "written by this transaction"});
    return out;
  }
  if (h.hi > t0 - kSlack) {
    const bool same = variant == v.variant;
    switch (v.status) {
      case St::resolved:
        if (same) {
          out.push_back(Expect{"replay", v.gen, false, {}, {}, v.resp, "resolved, same payload"});
        } else {
          out.push_back(Expect{"mismatch", v.gen, false, {}, {}, {}, "resolved, other payload"});
        }
        break;
      case St::in_progress:
        if (v.lease_end > t0 - kSlack) out.push_back(Expect{"in_progress", -1, false, {}, {}, {}, "live lease"});
        if (v.lease_end <= t1 + kSlack) {
          if (same) {
            out.push_back(Expect{"resumed", v.gen, true, v.rp, v.rdata, {}, "expired lease, same payload"});
          } else {
            out.push_back(Expect{"mismatch", v.gen, false, {}, {}, {}, "expired lease, other payload"});
          }
        }
        break;
      case St::released:
        if (v.checkpointed) {
          if (same) {
            out.push_back(Expect{"resumed", v.gen, true, v.rp, v.rdata, {}, "released after a checkpoint"});
          } else {
            out.push_back(Expect{"mismatch", v.gen, false, {}, {}, {}, "released after a checkpoint, other payload"});
          }
        } else if (v.pinned && !same) {
          out.push_back(Expect{"mismatch", v.gen, false, {}, {}, {}, "released without a checkpoint, pinned, other payload"});
        } else {
          out.push_back(Expect{"acquired", v.gen, true, {}, {}, {}, "released without a checkpoint"});
        }
        break;
    }
  }
  return out;
}

std::vector<Expect> ModelRun::predict_acquire(const Session& s, int k, int variant, Micros t0, Micros t1) const {
  const std::string held_by = locker(&s, k);
  const bool stale = snapshot_stale(s, k);
  std::vector<Expect> out;
  for (Expect& e : base_outcomes(visible(s, k), owns(s, k), variant, t0, t1)) {
    if (e.write && (!held_by.empty() || stale)) {
      if (!held_by.empty())
        out.push_back(Expect{"in_progress", -1, false, {}, {}, {}, "would write; key held by " + held_by});
      if (stale)
        out.push_back(
            Expect{"40001", -1, false, {}, {}, {}, "would write; snapshot older than the key's last commit"});
      continue;
    }
    const bool refusal = e.outcome == "replay" || e.outcome == "mismatch";
    out.push_back(e);
    if (refusal && !held_by.empty()) {
      out.push_back(
          Expect{"in_progress", -1, false, {}, {}, {}, "key locked by " + held_by + " (fingerprint not compared)"});
    }
  }
  if (s.tx && s.tx->iso != Isolation::read_committed) {
    out.push_back(Expect{"40001", -1, false, {}, {}, {}, "allowed under REPEATABLE READ / SERIALIZABLE"});
  }
  return out;
}

std::string ModelRun::describe(const std::vector<Expect>& es) {
  std::string s;
  for (const Expect& e : es) {
    if (!s.empty()) s += " | ";
    s += e.outcome;
    if (e.gen >= 0) s += " gen " + std::to_string(e.gen);
    if (e.outcome == "resumed") s += " rp " + opt_str(e.rp) + " data " + opt_str(e.rdata);
    if (e.resp) s += " {" + model::describe(*e.resp) + "}";
    s += " (" + e.why + ")";
  }
  return s;
}

bool ModelRun::matches(const Expect& e, const AcquireRow& a) {
  if (e.outcome != a.outcome) return false;
  if (e.gen >= 0 && (!a.generation || *a.generation != e.gen)) return false;
  if (e.outcome == "resumed") return a.rp == e.rp && a.rdata == e.rdata;
  if (e.outcome == "replay") return a.resp && e.resp && *a.resp == *e.resp;
  return true;
}

std::string ModelRun::payload(int k, int variant) const {
  return R"({"amount": )" + std::to_string(100 * (k + 1) + variant) + R"(, "currency": "EUR", "variant": )" +
         std::to_string(variant) + "}";
}

// Returns the outcome ("" after an error).
std::string ModelRun::acquire(Session& s, int k, int variant, Micros lease, Micros ttl, bool wait) {
  const bool autocommit = !s.tx;
  if (autocommit) {
    Tx tx;
    tx.serial = ++tx_serial_;
    tx.block = false;
    s.tx = std::move(tx);
  }
  const std::string label = txlabel(s);
  const Isolation iso = s.tx->iso;
  const std::string what = label + " acquire " + klabel(k) + " v" + std::to_string(variant) +
                           " lease=" + std::to_string(lease / 1000) + "ms ttl=" + std::to_string(ttl / 1000) + "ms " +
                           (wait ? "wait" : "reject");
  if (wait) ++n_wait_;
  Reply r = stmt(*s.conn, kAcquire,
                 {keys_[k].tenant, keys_[k].name, payload(k, variant), interval_of(lease), interval_of(ttl),
                  std::string(wait ? "wait" : "reject")});

  // 5. Never waits on a lock; wait mode polls at most idem.wait_timeout, under READ COMMITTED.
  const double wait_limit = static_cast<double>(kWaitTimeout) / 1e6;
  const double limit = wait && iso == Isolation::read_committed ? wait_limit + kNoWaitSeconds : kNoWaitSeconds;
  if (r.state == "55P03") violation("invariant 5: " + what + " waited for a lock (55P03 under lock_timeout)", k);
  if (r.state == "57014") violation("invariant 5: " + what + " hit statement_timeout (it hung)", k);
  if (r.seconds > limit) {
    violation("invariant 5: " + what + " took " + std::to_string(r.seconds) + " s (limit " + std::to_string(limit) +
                  " s)" + (r.ok() ? "" : ", then SQLSTATE " + r.state),
              k);
  }

  if (!r.ok()) {
    if (r.state == "23505") violation("acquire raised 23505 (unique violation): " + what + ": " + r.error, k);
    if (r.state == "40001" && iso != Isolation::read_committed) {
      ++n_serialization_;
      if (!snapshot_stale(s, k)) {
        ++n_serialization_fresh_;
        if (iso == Isolation::repeatable_read) ++n_serialization_fresh_rr_;
      }
      note(what + " -> 40001" + (snapshot_stale(s, k) ? " (stale snapshot)" : ""));
      recover_after_error(s);
      return "";
    }
    violation(what + " failed: SQLSTATE " + r.state + ": " + r.error, k);
  }
  const AcquireRow a = parse_acquire(*r.rows);
  std::string got = a.outcome;
  if (a.generation) got += " gen=" + std::to_string(*a.generation);
  if (a.attempt) got += " attempt=" + std::to_string(*a.attempt);
  if (a.lease_end) got += " lease_end=" + rel(*a.lease_end);
  if (a.rp) got += " rp=" + opt_str(a.rp);
  note(what + " -> " + got + " [" + rel(a.t0) + "," + rel(a.t1) + "] " +
       std::to_string(r.seconds * 1000).substr(0, 6) + "ms");

  const bool granted = a.outcome == "acquired" || a.outcome == "resumed";
  // A holder's handle is the record's plus ":" and its lease's 32-hex-digit secret; a refusal's
  // is the record's alone.
  const std::size_t plain_size = keys_[k].handle.size();
  const bool handle_ok = granted ? a.handle.size() == plain_size + 33 && a.handle.compare(0, plain_size, keys_[k].handle) == 0 &&
                                       a.handle[plain_size] == ':'
                                 : a.handle == keys_[k].handle;
  if (!handle_ok) violation(what + ": handle " + a.handle + ", expected " + keys_[k].handle + (granted ? ":<secret>" : ""), k);
  if (granted && a.attempt) holder_handles_[*a.attempt] = a.handle;
  if (granted) {
    if (!a.attempt || !a.generation || !a.lease_end)
      violation(what + ": " + a.outcome + " without attempt/generation/lease_expires_at", k);
    // 6. fencing tokens always grow (one global sequence; the driver is one thread)
    if (*a.attempt <= max_attempt_) {
      violation("invariant 6: " + what + ": attempt " + std::to_string(*a.attempt) +
                    " is not above the last issued " + std::to_string(max_attempt_),
                k);
    }
    max_attempt_ = *a.attempt;
    if (*a.lease_end - lease < a.t0 - kSlack || *a.lease_end - lease > a.t1 + kSlack) {
      violation(what + ": lease_expires_at " + rel(*a.lease_end) + " is not the call's time + lease (call ran " +
                    rel(a.t0) + ".." + rel(a.t1) + ")",
                k);
    }
    if (a.any_response_column) violation(what + ": " + a.outcome + " carries response columns", k);
    check_single_holder(s, k, a, what);
  } else {
    if (a.lease_end) violation(what + ": lease_expires_at is not NULL for " + a.outcome, k);
    if (a.outcome == "in_progress" && !a.retry_after) violation(what + ": in_progress without retry_after", k);
  }
  // 6. the generation never decreases
  if (a.generation) {
    const Rec& v = visible(s, k);
    const int floor_gen = v.exists ? v.gen : v.hwm;
    const int floor_latest =
        granted ? std::max(floor_gen, committed_[k].exists ? committed_[k].gen : committed_[k].hwm) : floor_gen;
    if (*a.generation < floor_latest) {
      violation("invariant 6: " + what + ": generation " + std::to_string(*a.generation) + " is below " +
                    std::to_string(floor_latest),
                k);
    }
  }
  // 3. replayed bytes equal the completed bytes
  if (a.outcome == "replay") {
    if (!a.resp || !a.generation) violation("invariant 3: " + what + ": replay without a response or generation", k);
    const Response* sent = nullptr;
    const Rec& v = visible(s, k);
    if (owns(s, k) && v.exists && v.status == St::resolved && v.gen == *a.generation) sent = &v.resp;
    if (!sent) {
      const auto it = responses_[k].find(static_cast<int>(*a.generation));
      if (it != responses_[k].end()) sent = &it->second;
    }
    if (!sent)
      violation("invariant 3: " + what + ": replay of generation " + std::to_string(*a.generation) +
                    " that was never completed",
                k);
    if (!(*sent == *a.resp)) {
      violation("invariant 3: " + what + ": replayed {" + model::describe(*a.resp) +
                    "} but the complete stored {" + model::describe(*sent) + "}",
                k);
    }
  }
  // The whole answer is one the contract allows from the model's state.
  const std::vector<Expect> allowed = predict_acquire(s, k, variant, a.t0, a.t1);
  bool ok = false;
  for (const Expect& e : allowed) ok = ok || matches(e, a);
  if (!ok) {
    std::string seen = a.outcome + " gen " + (a.generation ? std::to_string(*a.generation) : "NULL");
    if (a.outcome == "resumed") seen += " rp " + opt_str(a.rp) + " data " + opt_str(a.rdata);
    if (a.resp) seen += " {" + model::describe(*a.resp) + "}";
    violation("model: " + what + " answered " + seen + " in [" + rel(a.t0) + "," + rel(a.t1) +
                  "]; the contract allows: " + describe(allowed),
              k);
  }
  // wait mode: polls under READ COMMITTED, answers at once otherwise
  if (wait && a.outcome == "in_progress" && !owns(s, k)) {
    if (iso != Isolation::read_committed && r.seconds * 1e6 >= static_cast<double>(kWaitTimeout)) {
      violation("invariant 5: " + what + " polled " + std::to_string(r.seconds) + " s under " + isolation_name(iso) +
                    " (on_busy => 'wait' waits only under READ COMMITTED)",
                k);
    }
    const Rec& v = visible(s, k);
    const bool busy_throughout =
        !locker(&s, k).empty() || (v.exists && v.status == St::in_progress && v.lease_end > a.t1 + kSlack);
    if (iso == Isolation::read_committed && busy_throughout &&
        r.seconds * 1e6 < 0.75 * static_cast<double>(kWaitTimeout)) {
      violation("invariant 5: on_busy => 'wait' under READ COMMITTED answered in_progress after " +
                    std::to_string(r.seconds) + " s, without polling for idem.wait_timeout (" +
                    std::to_string(kWaitTimeout / 1000) + " ms): " + what,
                k);
    }
  }
  count_outcome(a.outcome);

  if (granted) {
    Rec& w = writable(s, k);
    if (a.outcome == "acquired") {
      // A new generation frees the payload; a fresh attempt of the same one keeps it pinned.
      if (!w.exists || static_cast<int>(*a.generation) != w.gen) w.pinned = false;
      w.exists = true;
      w.gen = static_cast<int>(*a.generation);
      w.variant = variant;
      w.checkpointed = false;
      w.rp.reset();
      w.rdata.reset();
      w.resp = Response{};
      w.end_lo = w.end_hi = 0;
    }
    // A takeover may follow an attempt that called the handler: the payload stays the key's
    // (only a record without a checkpoint ever asks, and a resume keeps its checkpoint).
    if (a.outcome == "resumed") w.pinned = true;
    w.status = St::in_progress;
    w.attempt = *a.attempt;
    w.lease = lease;
    w.ttl = ttl;
    w.lease_end = *a.lease_end;
    w.hwm = std::max(w.hwm, w.gen);
    auto& seen = attempts_[k];
    seen.push_back(*a.attempt);
    if (seen.size() > 16) seen.erase(seen.begin());
  } else if (s.tx->block && !owns(s, k)) {
    probe_no_lock(s, k, what);
  }
  if (autocommit) {
    std::vector<int> ks;
    for (const auto& [key, rec] : s.tx->writes) ks.push_back(key);
    commit_writes(s.tx->writes);
    s.tx.reset();
    cross_check(ks);
  }
  return a.outcome;
}

void ModelRun::count_outcome(const std::string& o) {
  if (o == "acquired")
    ++n_acquired_;
  else if (o == "resumed")
    ++n_resumed_;
  else if (o == "replay")
    ++n_replay_;
  else if (o == "in_progress")
    ++n_in_progress_;
  else if (o == "mismatch")
    ++n_mismatch_;
}

// Invariants 1 and 2 for a grant (acquired/resumed) of key k.
void ModelRun::check_single_holder(const Session& s, int k, const AcquireRow& a, const std::string& what) {
  const int g = static_cast<int>(*a.generation);
  // What the grant replaced: this transaction's own version, else the latest committed one.
  const Rec& base = owns(s, k) ? s.tx->writes.at(k) : committed_[k];
  if (base.exists && base.status == St::in_progress && base.attempt != *a.attempt && base.lease_end > a.t1 + kSlack) {
    violation("invariant 1: " + what + " got " + a.outcome + " (attempt " + std::to_string(*a.attempt) +
                  ") while attempt " + std::to_string(base.attempt) + " (gen " + std::to_string(base.gen) +
                  ") holds a live lease until " + rel(base.lease_end),
              k);
  }
  for (const Session& o : sessions_) {
    if (&o == &s || !o.tx) continue;
    const auto it = o.tx->writes.find(k);
    if (it != o.tx->writes.end()) {
      violation("invariant 1: " + what + " got " + a.outcome + " while " + o.name + " tx" +
                    std::to_string(o.tx->serial) + " holds the key in its open transaction (" + describe(it->second) +
                    ")",
                k);
    }
  }
  for (const Prepared& p : prepared_) {
    const auto it = p.tx.writes.find(k);
    if (it != p.tx.writes.end()) {
      violation("invariant 1: " + what + " got " + a.outcome + " while prepared transaction " + p.gid +
                    " holds the key (" + describe(it->second) + ")",
                k);
    }
  }
  if (purge_deleted_.count(k)) {
    violation("invariant 1: " + what + " got " + a.outcome + " for a record the open purge transaction deleted", k);
  }
  if (base.exists && base.gen == g) {
    const bool freed =
        base.status == St::released || (base.status == St::in_progress && base.lease_end <= a.t1 + kSlack);
    if (!freed) {
      violation("invariant 2: " + what + " got a second " + a.outcome + " in generation " + std::to_string(g) +
                    " although the previous grant (attempt " + std::to_string(base.attempt) + ", " +
                    st_name(base.status) + ") neither expired nor was released",
                k);
    }
  }
}

// 7. A refused acquire leaves no advisory lock and no row lock (probed from another connection).
void ModelRun::probe_no_lock(const Session& s, int k, const std::string& what) {
  ++n_lock_probes_;
  const Result held = must(*observer_, kAdvisoryHeld, "lock probe", {s.pid, keys_[k].lock_key});
  if (held.integer(0, "n") != 0) {
    violation("invariant 7: after " + what + " the session (pid " + s.pid + ") still holds the key's advisory lock",
              k);
  }
  if (!locker(&s, k).empty()) return;  // a legitimate holder locks the row: nothing to learn
  Reply probe = stmt(*observer_, kRowLockProbe, {keys_[k].tenant, keys_[k].digest_hex});
  if (probe.state == "55P03") {
    violation("invariant 7: after " + what +
                  " the record's row is locked (FOR UPDATE NOWAIT failed) and no other "
                  "transaction holds the key",
              k);
  }
  if (!probe.ok()) violation("row-lock probe failed: SQLSTATE " + probe.state + ": " + probe.error, k);
}

}  // namespace idem::it::model
