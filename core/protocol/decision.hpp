// The acquisition protocol as a table: what acquire does with a key, given what its record says.
// Pure: no clock, no locks, no PostgreSQL. The caller reads the record, asks here, and takes the
// key's lock only for the decisions that write (docs/design-decisions.md, "Acquire as a table").
#pragma once

namespace idem::protocol {

enum class RecordStatus { Absent, InProgress, Resolved, Released };

// What acquire knows about a key's record at one instant.
struct RecordView {
  RecordStatus status = RecordStatus::Absent;
  bool history = false;          // expires_at has passed: the record is history (never resumed)
  bool lease_live = false;       // in_progress and its lease has not run out
  bool own_transaction = false;  // written by the caller's own open transaction
  bool has_checkpoint = false;   // a recovery point was recorded in this generation
  bool same_payload = false;     // the caller's fingerprint equals the record's
  // An attempt of this generation may have called the handler (a release that did not say it
  // had not): the processor may hold a charge under the generation's key, for this payload only.
  bool payload_pinned = false;
};

enum class Decision {
  Insert,         // no record: create generation high-water + 1, outcome acquired
  NewGeneration,  // the record is history: generation + 1, outcome acquired
  FreshAttempt,   // released before any checkpoint: same generation, acquired; a new payload
                  // only while no attempt may have called the handler
  Resume,         // abandoned or released after a checkpoint: same generation, outcome resumed
  Replay,         // resolved with this payload: return the stored response
  Mismatch,       // the key belongs to another payload: nothing executes
  Busy,           // executing elsewhere (a live lease) or in this very transaction: in_progress
};

Decision decide(const RecordView& record) noexcept;

// Decisions that write the record, and so need the key's lock (and only those take it).
constexpr bool writes(Decision d) noexcept {
  return d == Decision::Insert || d == Decision::NewGeneration || d == Decision::FreshAttempt ||
         d == Decision::Resume;
}

// The SQL-facing name of a decision: acquired, resumed, replay, mismatch, in_progress.
const char* outcome_name(Decision d) noexcept;

}  // namespace idem::protocol
