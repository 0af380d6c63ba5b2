// The order machine of the reference (§8.2) as data, asked like the trigger asks it.
#include "core/machines/machine_table.hpp"

#include <gtest/gtest.h>

namespace idem::machines {
namespace {

MachineTable order_machine() {
  MachineTable t;
  for (const char* s : {"created", "confirmed", "shipped", "cancelled", "refunded"}) t.add_state("order", s);
  t.add_transition("order", "created", "confirmed", {42, "stock available"});
  t.add_transition("order", "created", "cancelled", {43, "before payment capture"});
  t.add_transition("order", "created", "refunded", {});
  t.add_transition("order", "confirmed", "shipped", {});
  t.add_transition("order", "confirmed", "refunded", {});
  return t;
}

TEST(MachineTable, AllowedGuardedAndRefused) {
  const MachineTable t = order_machine();
  EXPECT_EQ(t.check("order", "confirmed", "shipped").verdict, Verdict::Allowed);
  const Check guarded = t.check("order", "created", "confirmed");
  ASSERT_EQ(guarded.verdict, Verdict::NeedsGuard);
  EXPECT_EQ(guarded.transition->guard_oid, 42u);
  EXPECT_EQ(guarded.transition->guard_name, "stock available");
  const Check terminal = t.check("order", "shipped", "refunded");
  EXPECT_EQ(terminal.verdict, Verdict::Terminal);
  EXPECT_EQ(terminal.message, "order cannot move from shipped to refunded: shipped is terminal");
  const Check backwards = t.check("order", "confirmed", "created");
  EXPECT_EQ(backwards.verdict, Verdict::NoTransition);
  EXPECT_EQ(backwards.message, "order cannot move from confirmed to created: no such transition");
}

TEST(MachineTable, UnknownMachineAndState) {
  const MachineTable t = order_machine();
  EXPECT_EQ(t.check("invoice", "a", "b").verdict, Verdict::UnknownMachine);
  EXPECT_EQ(t.check("invoice", "a", "b").message, "no state machine named 'invoice'");
  EXPECT_EQ(t.check("order", "created", "lost").verdict, Verdict::UnknownState);
  EXPECT_EQ(t.check("order", "created", "lost").message, "machine order has no state 'lost'");
  EXPECT_TRUE(t.has_state("order", "refunded"));
  EXPECT_FALSE(t.has_state("order", "paid"));
}

}  // namespace
}  // namespace idem::machines
