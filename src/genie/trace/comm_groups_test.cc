// pg_name normalisation and comm-group files (the STG workload.json is the real example).
#include "genie/trace/comm_groups.h"

#include <gtest/gtest.h>

namespace genie::trace {
namespace {

TEST(CommGroupsTest, ParsePgName) {
  EXPECT_EQ(*ParsePgName(""), kWorldGroupId);
  EXPECT_EQ(*ParsePgName("1"), 1);
  EXPECT_EQ(*ParsePgName("1.0"), 1);
  EXPECT_EQ(*ParsePgName("0.0"), 0);
  EXPECT_EQ(*ParsePgName(" 12 "), 12);
  EXPECT_FALSE(ParsePgName("1.5").ok());
  EXPECT_FALSE(ParsePgName("default_pg").ok());
  EXPECT_FALSE(ParsePgName("1.").ok());
  EXPECT_NE(ParsePgName("x").status().message().find("process-group number"), std::string::npos);
}

TEST(CommGroupsTest, LoadsStgWorkloadJson) {
  auto groups = CommGroups::Load(std::string(GENIE_DATA_DIR) +
                                 "/traces/generated/stg/llama_fsdp_dp4_tp2/workload.json");
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  EXPECT_EQ(groups->all().size(), 14u);
  EXPECT_EQ(*groups->Find(1), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(*groups->Find(2), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(*groups->Find(6), (std::vector<int>{3, 7}));
  EXPECT_EQ(*groups->Find(14), (std::vector<int>{7}));
  EXPECT_EQ(groups->Find(15), nullptr);
}

TEST(CommGroupsTest, ResolveAndErrors) {
  auto groups = CommGroups::Parse(R"({"1": [3, 1, 1], "2.0": [0]})", "g.json");
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  EXPECT_EQ(*groups->Find(1), (std::vector<int>{1, 3}));
  EXPECT_EQ(*groups->Resolve(kWorldGroupId, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(*groups->Resolve(0, 2), (std::vector<int>{0, 1}));  // PyTorch default group
  EXPECT_EQ(*groups->Resolve(2, 2), (std::vector<int>{0}));
  EXPECT_NE(groups->Resolve(1, 2).status().message().find("names rank 3"), std::string::npos);
  EXPECT_NE(groups->Resolve(7, 8).status().message().find("--comm-group"), std::string::npos);
  EXPECT_FALSE(CommGroups::Parse("[1,2]", "a.json").ok());
  EXPECT_FALSE(CommGroups::Parse("{\"x\": [1]}", "a.json").ok());
  EXPECT_FALSE(CommGroups::Parse("{\"1\": [-1]}", "a.json").ok());
  EXPECT_FALSE(CommGroups::Parse("{\"1\": []}", "a.json").ok());
  EXPECT_NE(CommGroups::Parse("{", "bad.json").status().message().find("bad.json"),
            std::string::npos);
  EXPECT_EQ(CommGroups::Load("/nonexistent/g.json").status().code(), Status::Code::kNotFound);
}

// The comm-group file reviewed like the configs: each malformed entry is an error naming the
// file and the group, never an exception.
TEST(CommGroupsTest, MalformedFilesAreErrorsNamingTheFile) {
  const char* cases[] = {
      R"([[0, 1]])",                          // not an object
      R"({"1": "0,1"})",                      // ranks not a list
      R"({"1": [0.5, 1]})",                   // not whole numbers
      R"({"1": [-1, 0]})",                    // negative
      R"({"1": [0, 1e30]})",                  // absurd (a float)
      R"({"1": [0, 18446744073709551615]})",  // past int
      R"({"1": [0, 99999999999999999999]})",  // past uint64
      R"({"1": [0, 4294967296]})",            // past int32
      R"({"1": []})",                         // empty
      R"({"one": [0, 1]})",                   // not a group number
      R"({"-1": [0, 1]})",                    // negative group id
      R"({"1": [0, null]})",
      R"({"1": {"0": 1}})",
      "",
      "{",
  };
  for (const char* text : cases) {
    auto g = CommGroups::Parse(text, "groups.json");
    ASSERT_FALSE(g.ok()) << text;
    EXPECT_EQ(g.status().message().rfind("groups.json: ", 0), 0u) << g.status().message();
  }
  auto ok = CommGroups::Parse(R"({"1": [3, 1, 1, 2], "2.0": [0]})", "groups.json");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok->Find(1), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(*ok->Find(2), (std::vector<int>{0}));
}

// Found by running a deep input through fuzz/comm_groups_fuzz: a group's member that was a deeply nested list was printed in the error, which
// recursed once per level and overflowed the stack.
TEST(CommGroupsTest, DeeplyNestedMembersAreNamedNotPrinted) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto g = CommGroups::Parse("{\"1\": [0, " + deep + "]}", "groups.json");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("groups.json: group 1 has a list, which is not a rank"),
            std::string::npos)
      << g.status().message();
  g = CommGroups::Parse("{\"2\": [{\"a\": " + deep + "}]}", "groups.json");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("group 2 has an object"), std::string::npos)
      << g.status().message();
  g = CommGroups::Parse("{\"3\": [1, -4]}", "groups.json");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("group 3 has '-4'"), std::string::npos)
      << g.status().message();
}

}  // namespace
}  // namespace genie::trace
