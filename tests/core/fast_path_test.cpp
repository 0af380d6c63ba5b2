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

}  // namespace
}  // namespace idem::protocol
