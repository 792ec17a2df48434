// Planning a custom algorithm handed over as data: a hand-built algorithm plans and passes the
// checker without any file; an algorithm that does not fit its buffer, names a rank outside the
// group or depends on a later step is an error naming it, never a crash. (The shipped files,
// loaded as run setup loads them: runtime/custom_plan_test.cc.)
#include "genie/collective/custom.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "genie/collective/planner.h"
#include "genie/collective/schedule_checker.h"

namespace genie::collective {
namespace {

using spec::CustomAlgorithm;
using spec::CustomStep;
using spec::CustomStepKind;


CollectiveSpec Spec(std::shared_ptr<const CustomAlgorithm> algorithm, Bytes size = 1 << 20) {
  CollectiveSpec s;
  s.type = CollectiveType::kAllReduce;
  s.size = size;
  for (int r = 0; r < (algorithm ? algorithm->ranks : 8); ++r) s.group.push_back(r);
  s.options.algorithms = {Algorithm::kCustom};
  s.options.custom = std::move(algorithm);
  return s;
}

CustomStep StepOf(CustomStepKind kind, int peer, uint32_t chunk, std::vector<uint32_t> deps) {
  CustomStep s;
  s.kind = kind;
  (kind == CustomStepKind::kSend ? s.send_peer : s.recv_peer) = peer;
  s.chunk = chunk;
  s.deps = std::move(deps);
  return s;
}

// Two ranks, two chunks: each sends the other's chunk, receive-reduces its own, sends the
// reduced chunk back and receives the other's result.
std::shared_ptr<CustomAlgorithm> TwoRanks() {
  auto a = std::make_shared<CustomAlgorithm>();
  a->source = "two-ranks (built in the test)";
  a->collective = "allreduce";
  a->ranks = 2;
  a->chunks = 2;
  a->steps.resize(2);
  for (int r = 0; r < 2; ++r) {
    const int peer = 1 - r;
    const auto mine = static_cast<uint32_t>(r), theirs = static_cast<uint32_t>(peer);
    auto& s = a->steps[static_cast<size_t>(r)];
    s.push_back(StepOf(CustomStepKind::kSend, peer, theirs, {}));
    s.push_back(StepOf(CustomStepKind::kRecvReduce, peer, mine, {0}));
    s.push_back(StepOf(CustomStepKind::kSend, peer, mine, {1}));
    s.push_back(StepOf(CustomStepKind::kRecv, peer, theirs, {2}));
  }
  return a;
}

TEST(Custom, AHandBuiltAlgorithmPlansWithoutAnyFile) {
  const CollectiveSpec spec = Spec(TwoRanks(), 4096);
  auto all = PlanAll(spec);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(CheckSchedules(spec, *all).ok()) << CheckSchedules(spec, *all).ToString();
  EXPECT_EQ(BytesSent((*all)[0]), 4096u);  // two half-buffer messages
}

TEST(Custom, NoAlgorithmOrAMalformedOneIsAnErrorNotACrash) {
  CollectiveSpec spec = Spec(nullptr);
  auto r = Plan(spec, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("none was loaded"), std::string::npos)
      << r.status().message();

  auto past_the_end = TwoRanks();
  past_the_end->steps[1][2].chunk = 1;
  past_the_end->steps[1][2].count = 2;
  past_the_end->steps[1][2].where = "two.xml:9";
  r = Plan(Spec(past_the_end), 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("two.xml:9: chunks [1, 3) fall outside the 2 chunks"),
            std::string::npos)
      << r.status().message();

  auto bad_peer = TwoRanks();
  bad_peer->steps[0][0].send_peer = 5;
  r = Plan(Spec(bad_peer), 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("two-ranks (built in the test): rank 0 step 0"),
            std::string::npos)
      << r.status().message();

  auto later_dep = TwoRanks();
  later_dep->steps[1][0].deps = {3};
  r = Plan(Spec(later_dep), 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not an earlier step of rank 1"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace genie::collective
