// The rules, in the order they apply. Each line is one row of the table in
// docs/design-decisions.md and of tests/core/decision_test.cpp.
#include "core/protocol/decision.hpp"

namespace idem::protocol {

Decision decide(const RecordView& r) noexcept {
  if (r.status == RecordStatus::Absent) return Decision::Insert;
  // A batch that meets its own unfinished key again is still executing it, expired or not.
  if (r.status == RecordStatus::InProgress && r.own_transaction) return Decision::Busy;
  // History is never a recovery point: whatever it recorded, the key starts over.
  if (r.history) return Decision::NewGeneration;
  switch (r.status) {
    case RecordStatus::Resolved:
      return r.same_payload ? Decision::Replay : Decision::Mismatch;
    case RecordStatus::InProgress:
      if (r.lease_live) return Decision::Busy;
      return r.same_payload ? Decision::Resume : Decision::Mismatch;
    case RecordStatus::Released:
      // Another body under a key the processor may already have charged would be matched to
      // that charge (or refused by the processor forever): once pinned, the payload is the key's.
      if (!r.has_checkpoint) return r.payload_pinned && !r.same_payload ? Decision::Mismatch : Decision::FreshAttempt;
      return r.same_payload ? Decision::Resume : Decision::Mismatch;
    case RecordStatus::Absent:
      break;
  }
  return Decision::Insert;
}

const char* outcome_name(Decision d) noexcept {
  switch (d) {
    case Decision::Insert:
    case Decision::NewGeneration:
    case Decision::FreshAttempt: return "acquired";
    case Decision::Resume: return "resumed";
    case Decision::Replay: return "replay";
    case Decision::Mismatch: return "mismatch";
    case Decision::Busy: return "in_progress";
  }
  return "in_progress";
}

}  // namespace idem::protocol
