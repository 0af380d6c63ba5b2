// Which calls the C fast path answers (core/protocol/fast_path.hpp), over every combination.
#include <gtest/gtest.h>

#include "core/protocol/fast_path.hpp"

namespace idem::protocol {
namespace {

constexpr Decision kAll[] = {Decision::Insert, Decision::NewGeneration, Decision::FreshAttempt, Decision::Resume,
                             Decision::Replay, Decision::Mismatch,      Decision::Busy};

TEST(FastPath, TakesOnlyPlainArgumentsWhenEnabled) {
  for (int bits = 0; bits < 4; ++bits) {
    FastCall call;
    call.enabled = bits & 1;
    call.arguments_plain = bits & 2;
    EXPECT_EQ(fast_path_takes(call), bits == 3) << bits;
  }
}

TEST(FastPath, InsertsOnlyUnderReadCommitted) {
  FastCall call;
  call.read_committed = true;
  EXPECT_TRUE(fast_path_inserts(call));
  call.read_committed = false;
  EXPECT_FALSE(fast_path_inserts(call));
}

TEST(FastPath, AnswersOnlyDecisionsThatWriteNothingAndNeverWaits) {
  int answered = 0;
  for (Decision d : kAll) {
    for (int bits = 0; bits < 8; ++bits) {
      FastCall call;
      call.wait_mode = bits & 1;
      call.read_committed = bits & 2;
      const bool own = bits & 4;
      const bool answers = fast_path_answers(call, d, own);
      if (writes(d)) {
        EXPECT_FALSE(answers) << outcome_name(d);
      }
      if (d == Decision::Replay || d == Decision::Mismatch) {
        EXPECT_TRUE(answers);
      }
      // A waiter under READ COMMITTED waits in the general path, unless the record is its own.
      if (d == Decision::Busy) {
        EXPECT_EQ(answers, !(call.wait_mode && call.read_committed && !own)) << bits;
      }
      answered += answers;
    }
  }
  EXPECT_EQ(answered, 8 + 8 + 7);  // replay, mismatch: always; busy: all but the one that waits
}

// complete: every refusal the general path names stays with it; a plain call is tried.
TEST(FastPathComplete, TriesOnlyACallTheGeneralPathWouldAccept) {
  CompleteCall plain;
  plain.required_present = true;
  plain.status = 201;
  plain.order_id_bytes = 12;
  plain.handle_has_secret = true;
  EXPECT_TRUE(fast_path_completes(plain));

  int tried = 0;
  for (int bits = 0; bits < 16; ++bits) {
    CompleteCall call = plain;
    call.enabled = bits & 1;
    call.required_present = bits & 2;
    call.headers_object = bits & 4;
    call.handle_has_secret = bits & 8;
    tried += fast_path_completes(call);
  }
  EXPECT_EQ(tried, 1);  // only with all four true

  for (int status : {0, 99, 100, 599, 600, -1}) {
    CompleteCall call = plain;
    call.status = status;
    EXPECT_EQ(fast_path_completes(call), status == 100 || status == 599) << status;
  }
  for (int bytes : {0, 256, 257}) {
    CompleteCall call = plain;
    call.order_id_bytes = bytes;
    EXPECT_EQ(fast_path_completes(call), bytes <= kMaxOrderIdBytes) << bytes;
  }
}

TEST(FastPathComplete, KeepsTheCallOnlyWithTheLockAndTheHoldersOneRow) {
  EXPECT_TRUE(fast_path_resolved(true, 1));
  EXPECT_FALSE(fast_path_resolved(false, 1));
  EXPECT_FALSE(fast_path_resolved(true, 0));
  EXPECT_FALSE(fast_path_resolved(false, 0));
  EXPECT_FALSE(fast_path_resolved(true, 2));
}

}  // namespace
}  // namespace idem::protocol
