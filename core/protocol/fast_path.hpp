// Which acquire calls the extension's C fast path (extension/hot_path/acquire.cpp) answers
// itself. Every other call goes to idem._acquire_general, the PL/pgSQL path, which answers every
// case (make test runs the whole schedule both ways: idem.fast_path). Pure, beside decide().
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

}  // namespace idem::protocol
