// ModelRun: the holder calls (checkpoint, complete, release), with live and stale fencing tokens.
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

// ------------------------------------------------------------------------------ holder calls

const char* ModelRun::call_name(Call c) {
  switch (c) {
    case Call::checkpoint:
      return "checkpoint";
    case Call::complete:
      return "complete";
    case Call::release:
      return "release";
  }
  return "?";
}

ModelRun::HolderExpect ModelRun::predict_holder(const Session& s, int k, std::int64_t attempt, Micros t0, Micros t1) const {
  HolderExpect e;
  const Rec& v = visible(s, k);
  const bool valid = v.exists && v.status == St::in_progress && v.attempt == attempt;
  if (snapshot_stale(s, k)) {
    e.lost = e.serial = true;
    e.why = "snapshot older than the key's last commit";
  } else if (valid) {
    e.ok = true;
    e.why = "attempt holds the record";
    if (history_at(v).lo <= t1 + kSlack) {
      e.lost = true;
      e.why += " (but it is history by now)";
    }
  } else {
    e.lost = true;
    e.why = v.exists ? std::string("record is ") + st_name(v.status) + " at attempt " + std::to_string(v.attempt)
                     : std::string("no record");
  }
  (void)t0;
  if (s.tx && s.tx->iso == Isolation::serializable) e.serial = true;
  return e;
}

// One checkpoint/complete/release. stale: the caller chose an attempt it knows does not hold the
// record; the call runs under a savepoint (or in a transaction of its own) and is rolled back.
void ModelRun::holder_call(Session& s, Call c, int k, std::int64_t attempt, bool stale, const Draw& d) {
  const bool autocommit = !s.tx;
  std::string frame_name;
  std::optional<std::string> row_before;
  if (stale) {
    ++n_stale_;
    if (autocommit) {
      must(*s.conn, "BEGIN", s.name);
      Tx tx;
      tx.serial = ++tx_serial_;
      s.tx = std::move(tx);
    }
    frame_name = "stale_" + std::to_string(++sp_serial_);
    must(*s.conn, "SAVEPOINT " + frame_name, s.name);
    s.tx->frames.push_back(Frame{frame_name, s.tx->writes});
    Reply before = stmt(*s.conn, kRowText, {keys_[k].tenant, keys_[k].digest_hex});
    if (!before.ok()) {
      // SERIALIZABLE may refuse even the read (a dangerous structure found by SSI).
      if (before.state != "40001" || s.tx->iso != Isolation::serializable) {
        violation(
            s.name + ": reading the row before a stale call failed: SQLSTATE " + before.state + ": " + before.error,
            k);
      }
      ++n_serialization_;
      note(txlabel(s) + " read before a stale call -> 40001");
      must(*s.conn, "ROLLBACK TO SAVEPOINT " + frame_name, s.name);
      must(*s.conn, "RELEASE SAVEPOINT " + frame_name, s.name);
      s.tx->writes = s.tx->frames.back().writes;
      s.tx->frames.pop_back();
      if (autocommit) {
        must(*s.conn, "ROLLBACK", s.name);
        s.tx.reset();
      }
      return;
    }
    if (before.rows->size() == 1) row_before = before.rows->text(0, "row");
  } else if (autocommit) {
    Tx tx;
    tx.serial = ++tx_serial_;
    tx.block = false;
    s.tx = std::move(tx);
  }
  const std::string label = txlabel(s);
  const std::string what = label + " " + call_name(c) + " " + klabel(k) + " attempt " + std::to_string(attempt) +
                           (stale ? " (stale token)" : "");
  // The attempt's own handle when acquire granted it; a made-up stale token goes with the plain
  // handle, and is refused for its token before its secret is looked at.
  const auto granted = holder_handles_.find(attempt);
  const bool of_this_key = granted != holder_handles_.end() && granted->second.rfind(keys_[k].handle + ":", 0) == 0;
  Params params = {of_this_key ? granted->second : keys_[k].handle, std::to_string(attempt)};
  std::string rp;
  std::optional<std::string> data, err, handler_called;
  Response resp;
  const std::string* sql = &kCheckpoint;
  switch (c) {
    case Call::checkpoint:
      rp = "step_" + std::to_string(step_);
      if (d[6] % 4 != 0) data = R"({"n": )" + std::to_string(d[7] % 100000) + "}";
      params.push_back(rp);
      params.push_back(data);
      break;
    case Call::complete: {
      sql = &kComplete;
      static const int kStatuses[] = {200, 201, 202, 400, 402, 409, 422};
      resp.status = kStatuses[d[6] % 7];
      Param headers;
      if (d[7] % 5 != 0) {
        headers = R"({"X-Op": ")" + std::to_string(step_) + R"(", "X-Session": ")" + s.name + R"("})";
        resp.headers = *headers;
      } else {
        resp.headers = "{}";
      }
      Param body;
      if (d[8] % 6 != 0) {
        std::string b = "body " + std::to_string(step_) + " ";
        const int n = static_cast<int>(d[9] % 24);
        std::uint64_t x = d[10];
        for (int i = 0; i < n; ++i) {
          b += static_cast<char>(x & 0xFF);
          x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        }
        b += '\0';
        resp.body = b;
        body = bytea_param(b);
      }
      if (d[11] % 4 != 0) resp.order_id = "ord-" + std::to_string(step_);
      params.push_back(std::to_string(resp.status));
      params.push_back(headers);
      params.push_back(body);
      params.push_back(resp.order_id);
      break;
    }
    case Call::release:
      sql = &kRelease;
      if (d[6] % 2 == 0) err = "transient failure " + std::to_string(step_);
      params.push_back(err);
      // handler_called: unknown (NULL), true or false; only false leaves the payload free.
      handler_called = d[7] % 3 == 0 ? std::optional<std::string>{} : std::optional<std::string>{d[7] % 3 == 1 ? "true" : "false"};
      params.push_back(handler_called);
      break;
  }
  Reply r = stmt(*s.conn, *sql, params);
  if (r.state == "55P03") violation("invariant 5: " + what + " waited for a lock (55P03 under lock_timeout)", k);
  if (r.state == "57014") violation("invariant 5: " + what + " hit statement_timeout (it hung)", k);
  if (r.seconds > kNoWaitSeconds) violation("invariant 5: " + what + " took " + std::to_string(r.seconds) + " s", k);

  Micros t0 = 0, t1 = 0;
  if (r.ok()) {
    t0 = std::stoll(r.rows->text(0, "t0"));
    t1 = std::stoll(r.rows->text(0, "t1"));
  } else {
    // No times from a failed call: bracket it by the client's duration, ending now.
    t1 = server_now();
    t0 = t1 - static_cast<Micros>(r.seconds * 1e6) - kSlack;
  }
  const HolderExpect e = predict_holder(s, k, attempt, t0, t1);
  const std::string result = r.ok() ? "ok" : "SQLSTATE " + r.state;
  note(what + " -> " + result + (r.ok() ? " [" + rel(t0) + "," + rel(t1) + "]" : ""));

  if (r.state == "IK005") ++n_lease_lost_;
  if (r.state == "40001") ++n_serialization_;
  const bool allowed = (r.ok() && e.ok) || (r.state == "IK005" && e.lost) || (r.state == "40001" && e.serial);
  if (stale && r.ok()) {
    const Result after = must(*s.conn, kRowText, s.name, {keys_[k].tenant, keys_[k].digest_hex});
    violation("invariant 4: " + what +
                  " succeeded (expected ERR_LEASE_LOST); row before: " + (row_before ? *row_before : "none") +
                  "; row after: " + (after.size() ? after.text(0, "row") : "none"),
              k);
  }
  if (!allowed) {
    violation(std::string(stale ? "invariant 4: " : "model: ") + what + " -> " + result +
                  (r.ok() ? "" : " (" + r.error + ")") + "; expected " + (e.ok ? "success " : "") +
                  (e.lost ? "IK005 " : "") + (e.serial ? "40001 " : "") + "(" + e.why + ")",
              k);
  }
  if (stale) {
    // Back to the savepoint: the stale call changed nothing, whatever it answered.
    must(*s.conn, "ROLLBACK TO SAVEPOINT " + frame_name, s.name);
    must(*s.conn, "RELEASE SAVEPOINT " + frame_name, s.name);
    s.tx->writes = s.tx->frames.back().writes;
    s.tx->frames.pop_back();
    if (autocommit) {
      must(*s.conn, "ROLLBACK", s.name);
      s.tx.reset();
    }
    return;
  }
  if (!r.ok()) {
    recover_after_error(s);
    return;
  }
  Rec& w = writable(s, k);
  switch (c) {
    case Call::checkpoint: {
      ++n_checkpoint_;
      const Micros v = std::stoll(r.rows->text(0, "v"));
      if (v - w.lease < t0 - kSlack || v - w.lease > t1 + kSlack) {
        violation(what + ": checkpoint returned " + rel(v) + ", not the call's time + lease " +
                      std::to_string(w.lease / 1000) + "ms (call ran " + rel(t0) + ".." + rel(t1) + ")",
                  k);
      }
      w.lease_end = v;
      w.checkpointed = true;
      w.rp = rp;
      w.rdata = data;
      break;
    }
    case Call::complete:
      ++n_complete_;
      w.status = St::resolved;
      w.resp = resp;
      w.end_lo = t0;
      w.end_hi = t1;
      break;
    case Call::release:
      ++n_release_;
      w.status = St::released;
      if (handler_called != std::optional<std::string>{"false"}) w.pinned = true;
      w.end_lo = t0;
      w.end_hi = t1;
      break;
  }
  if (autocommit) {
    std::vector<int> ks;
    for (const auto& [key, rec] : s.tx->writes) ks.push_back(key);
    commit_writes(s.tx->writes);
    s.tx.reset();
    cross_check(ks);
  }
}

// Keys whose record the session sees in_progress and nobody else holds.
std::vector<int> ModelRun::holder_candidates(const Session& s, bool own_only) const {
  std::vector<int> out;
  for (int k = 0; k < kKeys; ++k) {
    if (own_only && !owns(s, k)) continue;
    const Rec& v = visible(s, k);
    if (v.exists && v.status == St::in_progress && locker(&s, k).empty()) out.push_back(k);
  }
  return out;
}

bool ModelRun::try_holder(Session& s, Call c, const Draw& d) {
  std::vector<int> ks = holder_candidates(s, d[4] % 10 < 6);
  if (ks.empty()) ks = holder_candidates(s, false);
  if (ks.empty()) return false;
  const int k = ks[d[5] % ks.size()];
  holder_call(s, c, k, visible(s, k).attempt, false, d);
  return true;
}

void ModelRun::stale_call(Session& s, const Draw& d) {
  std::vector<int> free;
  for (int k = 0; k < kKeys; ++k) {
    if (locker(&s, k).empty()) free.push_back(k);
  }
  if (free.empty()) return;
  const int k = free[d[4] % free.size()];
  const Rec& v = visible(s, k);
  std::vector<std::int64_t> old;
  for (std::int64_t a : attempts_[k]) {
    const bool holds = v.exists && v.status == St::in_progress && v.attempt == a;
    const bool holds_latest =
        committed_[k].exists && committed_[k].status == St::in_progress && committed_[k].attempt == a;
    if (!holds && !holds_latest) old.push_back(a);
  }
  std::int64_t attempt;
  if (!old.empty() && d[5] % 3 != 0) {
    attempt = old[d[6] % old.size()];
  } else {
    attempt = std::max(v.attempt, max_attempt_) + kStaleOffset;
  }
  holder_call(s, static_cast<Call>(d[3] % 3), k, attempt, true, d);
}

}  // namespace idem::it::model
