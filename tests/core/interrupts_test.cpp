// core/ lets its host stop long work: the parser and the canonicalizer call the installed poll
// every kPollInterval values, and an exception from it abandons the work.
#include "core/interrupts.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"

namespace idem {
namespace {

int polls = 0;
void count_poll() { ++polls; }
void cancel_poll() { throw std::runtime_error("cancelled"); }

std::string many_values(int n) {
  std::string doc = "[";
  for (int i = 0; i < n; ++i) doc += i ? ",1" : "1";
  return doc + "]";
}

TEST(Interrupts, ParserAndCanonicalizerPoll) {
  polls = 0;
  set_interrupt_poll(count_poll);
  const json::Value v = json::parse_strict(many_values(100000));
  const int after_parse = polls;
  json::canonicalize(v);
  set_interrupt_poll(nullptr);
  // 100,001 values each way: at least 24 polls per pass.
  EXPECT_GE(after_parse, 24);
  EXPECT_GE(polls - after_parse, 24);
}

TEST(Interrupts, ACancelAbandonsTheParse) {
  set_interrupt_poll(cancel_poll);
  EXPECT_THROW(json::parse_strict(many_values(100000)), std::runtime_error);
  set_interrupt_poll(nullptr);
  EXPECT_NO_THROW(json::parse_strict(many_values(100000)));  // no host poll: runs to the end
}

}  // namespace
}  // namespace idem
