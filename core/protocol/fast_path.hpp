// Which acquire and complete calls the extension's C fast path (extension/hot_path/) answers
// itself. Every other call goes to idem._acquire_general or idem._complete_general, the PL/pgSQL
// path, which answers every case (make test runs the whole schedule both ways: idem.fast_path).
// Pure, beside decide().
#pragma once

#include "core/protocol/decision.hpp"

namespace idem::protocol {

// The call as the fast path sees it before any lookup.
struct FastCall {
  bool enabled = true;            // idem.fast_path
  bool arguments_plain = false;   // no NULL, lease and TTL within bounds, on_busy and mutation_type known, a 32-byte digest
  bool read_committed = false;    // the transaction's isolation
  bool wait_mode = false;         // on_busy => 'wait'
};

// Whether the fast path looks at the call at all (else: the general path names any error).
constexpr bool fast_path_takes(const FastCall& call) noexcept { return call.enabled && call.arguments_plain; }

// No record: the fast path inserts only under READ COMMITTED (an older snapshot must first prove
// that no purge it cannot see retired the key), and only with the key's lock (and under the key
// scope tenant its owner lock) taken without waiting; the general path decides otherwise.
constexpr bool fast_path_inserts(const FastCall& call) noexcept { return call.read_committed; }

// A record: the decisions the fast path answers without any lock. Replay and mismatch always;
// in_progress unless the caller would wait for it (wait mode under READ COMMITTED, not its own
// transaction's record). Decisions that write go to the general path.
constexpr bool fast_path_answers(const FastCall& call, Decision d, bool own_transaction) noexcept {
  return d == Decision::Replay || d == Decision::Mismatch ||
         (d == Decision::Busy && (!call.wait_mode || !call.read_committed || own_transaction));
}

// complete(handle, attempt, status, headers, body, order_id, ...) as the fast path sees it.
struct CompleteCall {
  bool enabled = true;             // idem.fast_path
  bool required_present = false;   // handle, attempt, status and handler_called are not NULL
  int status = 0;                  // the response's HTTP status
  int order_id_bytes = 0;          // 0 for NULL
  bool headers_object = true;      // headers NULL or a JSON object
  bool handle_has_secret = false;  // the handle parses and carries a lease secret (issued since 0.3.1)
};

constexpr int kMaxOrderIdBytes = 256;

// Whether the fast path tries to resolve the record itself: only a call the general path would
// accept as it stands. Every refusal (a NULL, a status outside 100..599, a long order id, headers
// that are not an object, a handle without a secret) is named by the general path.
constexpr bool fast_path_completes(const CompleteCall& call) noexcept {
  return call.enabled && call.required_present && call.status >= 100 && call.status <= 599 &&
         call.order_id_bytes <= kMaxOrderIdBytes && call.headers_object && call.handle_has_secret;
}

// Once it tried, the fast path keeps the call only when it took the key's lock without waiting and
// its one UPDATE resolved exactly the holder's record; a lost lease, a purge, a takeover or a wrong
// secret (no row), or a lock held elsewhere, goes to the general path having written nothing.
constexpr bool fast_path_resolved(bool lock_taken, long rows_resolved) noexcept { return lock_taken && rows_resolved == 1; }

}  // namespace idem::protocol
