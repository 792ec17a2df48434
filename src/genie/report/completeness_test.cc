#include "genie/report/completeness.h"

#include <gtest/gtest.h>

namespace genie::report {
namespace {

using nlohmann::json;

record::RankSummary Done(int rank, int iteration) {
  record::RankSummary s;
  s.rank = rank;
  s.iteration = iteration;
  return s;
}

record::OpEvent Op(int rank, int iteration) {
  record::OpEvent e;
  e.rank = rank;
  e.iteration = iteration;
  e.kind = OpKind::kCompute;
  return e;
}

TEST(CompletenessTest, AllRanksAndIterationsOfTheHeadersAreThere) {
  json headers = {{"headers", {{{"world_size", 2}, {"iterations", 2}, {"warmup", 1}}}}};
  std::vector<record::RankSummary> ranks;
  for (int r = 0; r < 2; ++r) {
    for (int i = -1; i < 2; ++i) ranks.push_back(Done(r, i));
  }
  Completeness c = CheckCompleteness(headers, {}, ranks, false);
  EXPECT_TRUE(c.complete());
  EXPECT_EQ(DescribeCompleteness(c), "");
  EXPECT_EQ(CompletenessJson(c)["complete"], true);
}

// A 4-rank run of 5 iterations killed in iteration 3: rank 2's stream is missing, ranks 0 and 1
// finished 0-2, rank 3 finished only 0 (it was in iteration 1 when it died).
TEST(CompletenessTest, AKilledRunNamesItsMissingRanksAndIterations) {
  json header = {{"rank", 0}, {"world_size", 4}, {"iterations", 5}, {"warmup", 0}};
  std::vector<record::RankSummary> ranks;
  for (int r : {0, 1}) {
    for (int i = 0; i < 3; ++i) ranks.push_back(Done(r, i));
  }
  ranks.push_back(Done(3, 0));
  Completeness c = CheckCompleteness(header, {Op(3, 1)}, ranks, true);
  EXPECT_FALSE(c.complete());
  EXPECT_EQ(c.missing_ranks, (Ranges{{2, 2}}));
  EXPECT_EQ(c.unfinished.at(0), (Ranges{{3, 4}}));
  EXPECT_EQ(c.unfinished.at(3), (Ranges{{1, 4}}));
  const std::string text = DescribeCompleteness(c);
  EXPECT_NE(text.find("# INCOMPLETE"), std::string::npos) << text;
  EXPECT_NE(text.find("ranks with no records: 2 (of 4)"), std::string::npos) << text;
  EXPECT_NE(text.find("iterations not finished: ranks 0-1: 3-4"), std::string::npos) << text;
  EXPECT_NE(text.find("iterations not finished: rank 3: 1-4"), std::string::npos) << text;
  EXPECT_NE(text.find("last record was incomplete"), std::string::npos) << text;
  json j = CompletenessJson(c);
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["missing_ranks"], json::parse("[[2,2]]"));
  EXPECT_EQ(j["unfinished_iterations"]["3"], json::parse("[[1,4]]"));
  EXPECT_EQ(j["iterations"], json({{"first", 0}, {"last", 4}}));
}

// Without headers (a simulation's results, hand-made streams) the records say what to expect.
TEST(CompletenessTest, WithoutHeadersTheRecordsSayWhatToExpect) {
  std::vector<record::RankSummary> ranks = {Done(0, 0), Done(0, 1), Done(2, 0)};
  Completeness c = CheckCompleteness(json(), {Op(2, 1)}, ranks, false);
  EXPECT_EQ(c.world_size, 3);
  EXPECT_EQ(c.missing_ranks, (Ranges{{1, 1}}));
  EXPECT_EQ(c.unfinished.at(2), (Ranges{{1, 1}}));
  EXPECT_NE(DescribeCompleteness(c).find("as far as the records tell"), std::string::npos);
  // Nothing at all: nothing is known to be missing, and nothing throws on odd run_info.
  EXPECT_TRUE(CheckCompleteness(json::array({1}), {}, {}, false).complete());
  EXPECT_TRUE(
      CheckCompleteness(json({{"headers", 3}, {"world_size", "x"}}), {}, {}, false).complete());
}

TEST(CompletenessTest, ManyIterationsStayIntervals) {
  json header = {{"world_size", 1}, {"iterations", 1000000}};
  Completeness c = CheckCompleteness(header, {}, {Done(0, 0), Done(0, 1)}, false);
  EXPECT_EQ(c.unfinished.at(0), (Ranges{{2, 999999}}));
  EXPECT_EQ(FormatRanges({{0, 3}, {7, 7}, {9, 10}}), "0-3,7,9-10");
}

}  // namespace
}  // namespace genie::report
