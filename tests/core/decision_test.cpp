// The acquisition table (core/protocol/decision.cpp): every row of docs/design-decisions.md's
// table spelled out, then properties checked over all 320 combinations of the inputs.
#include "core/protocol/decision.hpp"

#include <gtest/gtest.h>

namespace idem::protocol {
namespace {

using S = RecordStatus;
using D = Decision;

RecordView view(S status, bool history, bool lease_live, bool own, bool checkpoint, bool same, bool pinned = false) {
  RecordView r;
  r.payload_pinned = pinned;
  r.status = status;
  r.history = history;
  r.lease_live = lease_live;
  r.own_transaction = own;
  r.has_checkpoint = checkpoint;
  r.same_payload = same;
  return r;
}

TEST(Decision, TheTableRowByRow) {
  //                    status          history lease  own    ckpt   same
  EXPECT_EQ(decide(view(S::Absent,      false, false, false, false, false)), D::Insert);
  EXPECT_EQ(decide(view(S::InProgress,  false, false, true,  false, true)),  D::Busy);
  EXPECT_EQ(decide(view(S::InProgress,  true,  false, true,  false, false)), D::Busy);  // own, even expired
  EXPECT_EQ(decide(view(S::Resolved,    true,  false, false, false, false)), D::NewGeneration);
  EXPECT_EQ(decide(view(S::InProgress,  true,  false, false, false, true)),  D::NewGeneration);
  EXPECT_EQ(decide(view(S::Released,    true,  false, false, false, false)), D::NewGeneration);
  EXPECT_EQ(decide(view(S::Resolved,    false, false, false, false, true)),  D::Replay);
  EXPECT_EQ(decide(view(S::Resolved,    false, false, false, false, false)), D::Mismatch);
  EXPECT_EQ(decide(view(S::InProgress,  false, true,  false, false, true)),  D::Busy);
  EXPECT_EQ(decide(view(S::InProgress,  false, true,  false, true,  false)), D::Busy);
  EXPECT_EQ(decide(view(S::InProgress,  false, false, false, true,  true)),  D::Resume);
  EXPECT_EQ(decide(view(S::InProgress,  false, false, false, false, true)),  D::Resume);
  EXPECT_EQ(decide(view(S::InProgress,  false, false, false, true,  false)), D::Mismatch);
  EXPECT_EQ(decide(view(S::Released,    false, false, false, false, false)), D::FreshAttempt);
  EXPECT_EQ(decide(view(S::Released,    false, false, false, true,  true)),  D::Resume);
  EXPECT_EQ(decide(view(S::Released,    false, false, false, true,  false)), D::Mismatch);
  //                    status          history lease  own    ckpt   same   pinned
  EXPECT_EQ(decide(view(S::Released,    false, false, false, false, true,  true)),  D::FreshAttempt);
  EXPECT_EQ(decide(view(S::Released,    false, false, false, false, false, true)),  D::Mismatch);
  EXPECT_EQ(decide(view(S::Released,    true,  false, false, false, false, true)),  D::NewGeneration);
}

// Bug regression: after a release whose handler may have run (a processor timeout), the next
// attempt of the generation took another body and got the same processor key.
TEST(Decision, ReleasedAfterTheHandlerMayHaveRunKeepsItsPayload) {
  EXPECT_EQ(decide(view(S::Released, false, false, false, false, false, true)), D::Mismatch);
  EXPECT_EQ(decide(view(S::Released, false, false, false, false, true, true)), D::FreshAttempt);
  // Released saying the handler was not called: the key is free for another body, as before.
  EXPECT_EQ(decide(view(S::Released, false, false, false, false, false, false)), D::FreshAttempt);
}

// Bug regression: an expired resolved record with a checkpoint was resumed (even for another
// payload) instead of starting a new generation.
TEST(Decision, ExpiredCheckpointIsHistoryNotARecoveryPoint) {
  EXPECT_EQ(decide(view(S::Resolved, true, false, false, true, false)), D::NewGeneration);
  EXPECT_EQ(decide(view(S::Resolved, true, false, false, true, true)), D::NewGeneration);
}

TEST(Decision, PropertiesOverEveryCombination) {
  for (S status : {S::Absent, S::InProgress, S::Resolved, S::Released}) {
    for (int bits = 0; bits < 64; ++bits) {
      const RecordView r = view(status, bits & 1, bits & 2, bits & 4, bits & 8, bits & 16, bits & 32);
      const D d = decide(r);
      SCOPED_TRACE(testing::Message() << "status " << static_cast<int>(status) << " bits " << bits);
      if (status == S::Absent) {
        EXPECT_EQ(d, D::Insert);
      }
      // Only unfinished work resumes, only with its own payload, and never from history.
      if (d == D::Resume) {
        EXPECT_TRUE(r.same_payload);
        EXPECT_FALSE(r.history);
        EXPECT_NE(status, S::Resolved);
      }
      if (d == D::Replay) {
        EXPECT_TRUE(status == S::Resolved && r.same_payload && !r.history);
      }
      if (d == D::Mismatch) {
        EXPECT_FALSE(r.same_payload);
      }
      // Whatever may have reached the handler, no other body takes over the generation.
      if (r.payload_pinned && !r.same_payload && !r.history && !(status == S::InProgress && r.own_transaction)) {
        EXPECT_TRUE(d == D::Mismatch || d == D::Busy || d == D::Insert);
      }
      // Executing elsewhere, or in this very transaction, is never written over.
      if (status == S::InProgress && (r.own_transaction || (r.lease_live && !r.history))) {
        EXPECT_EQ(d, D::Busy);
      }
      EXPECT_EQ(writes(d), d != D::Replay && d != D::Mismatch && d != D::Busy);
    }
  }
}

TEST(Decision, OutcomeNames) {
  EXPECT_STREQ(outcome_name(D::Insert), "acquired");
  EXPECT_STREQ(outcome_name(D::NewGeneration), "acquired");
  EXPECT_STREQ(outcome_name(D::FreshAttempt), "acquired");
  EXPECT_STREQ(outcome_name(D::Resume), "resumed");
  EXPECT_STREQ(outcome_name(D::Replay), "replay");
  EXPECT_STREQ(outcome_name(D::Mismatch), "mismatch");
  EXPECT_STREQ(outcome_name(D::Busy), "in_progress");
}

}  // namespace
}  // namespace idem::protocol
