// CollectiveType's names: the CLI's, ASTRA-sim's and Chakra's spellings.
#include "genie/spec/collective_type.h"

#include <gtest/gtest.h>

namespace genie {
namespace {

TEST(CollectiveType, ParsesEverySpellingAndNamesEachType) {
  EXPECT_EQ(ParseCollectiveType("all-reduce"), CollectiveType::kAllReduce);
  EXPECT_EQ(ParseCollectiveType("ALL_GATHER"), CollectiveType::kAllGather);
  EXPECT_EQ(ParseCollectiveType("reduce_scatter_block"), CollectiveType::kReduceScatterBlock);
  EXPECT_EQ(ParseCollectiveType("alltoall"), CollectiveType::kAllToAll);
  EXPECT_FALSE(ParseCollectiveType("allreduce2").has_value());
  EXPECT_STREQ(CollectiveTypeName(CollectiveType::kBarrier), "barrier");
}

}  // namespace
}  // namespace genie
