#include "genie/record/output_guard.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "genie/record/run_folder.h"

namespace genie::record {
namespace {

namespace fs = std::filesystem;

class OutputGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("genie_output_guard_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
  }
  void TearDown() override {
    ::chmod(dir_.c_str(), 0755);
    fs::remove_all(dir_);
  }
  std::string P(const std::string& rel) const { return (dir_ / rel).string(); }
  fs::path dir_;
};

TEST_F(OutputGuardTest, AnOutputNamingAnInputByAnyPathIsRefused) {
  std::ofstream(P("w.0.et")) << "x";
  fs::create_symlink(P("w.0.et"), P("link.et"));
  fs::create_hard_link(P("w.0.et"), P("hard.et"));
  for (const std::string& out :
       {P("w.0.et"), P("sub/../w.0.et"), P("link.et"), P("hard.et")}) {
    OutputPlan plan{{P("w.0.et")}, {}, {out}, {}};
    Status s = CheckOutputs(plan);
    ASSERT_FALSE(s.ok()) << out;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find("refusing to write " + out), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(P("w.0.et")), std::string::npos) << s.message();
    // The same as a results output.
    EXPECT_FALSE(CheckOutputs({{P("w.0.et")}, {out}, {}, {}}).ok()) << out;
  }
  EXPECT_TRUE(CheckOutputs({{P("w.0.et")}, {P("r/results.json")}, {P("t.json")}, {}})
                  .ok());
}

TEST_F(OutputGuardTest, AnInputNotYetThereIsComparedByItsResolvedPath) {
  fs::create_symlink(dir_ / "sub", dir_ / "alias");
  EXPECT_FALSE(CheckOutputs({{P("sub/new.json")}, {}, {P("alias/new.json")}, {}}).ok());
}

TEST_F(OutputGuardTest, TwoOutputsOnOneFileAreRefused) {
  // --trace-out D/results.json, --trace-out D/rank-1.jsonl, --report D/results.json.
  OutputPlan plan{{}, {P("results.json"), P("rank-0.jsonl"), P("rank-1.jsonl")},
                  {P("sub/../rank-1.jsonl")}, {}};
  Status s = CheckOutputs(plan);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("which this command writes too (a results file or rank stream"), std::string::npos) << s.message();
  plan.outputs = {P("./results.json")};
  EXPECT_FALSE(CheckOutputs(plan).ok());
  plan.outputs = {P("trace.json")};
  EXPECT_TRUE(CheckOutputs(plan).ok());
}

TEST_F(OutputGuardTest, ADerivedOutputNeverReplacesAResultsFile) {
  fs::create_directories(dir_ / "old");
  std::ofstream(P("old/results.json")) << "{}";
  std::ofstream(P("old/stream.log")) << "{\"record\":\"header\",\"format\":\"genie-record\"}\n";
  std::ofstream(P("old/trace.json")) << "{}";
  EXPECT_FALSE(CheckOutputs({{}, {}, {P("old/results.json")}, {}}).ok());
  EXPECT_FALSE(CheckOutputs({{}, {}, {P("old/stream.log")}, {}}).ok());
  EXPECT_TRUE(CheckOutputs({{}, {}, {P("old/trace.json")}, {}}).ok());
  // A run writing its own results again over an earlier run's in place is fine.
  EXPECT_TRUE(CheckOutputs({{}, {P("old/results.json")}, {}, {}}).ok());
}

TEST_F(OutputGuardTest, AFolderOrFifoIsNoOutput) {
  EXPECT_FALSE(CheckOutputs({{}, {}, {P("sub")}, {}}).ok());
  ASSERT_EQ(::mkfifo(P("fifo").c_str(), 0644), 0);
  EXPECT_FALSE(CheckOutputs({{}, {P("fifo")}, {}, {}}).ok());
}

TEST_F(OutputGuardTest, AFolderAnotherJobHoldsIsRefusedUnlessItIsOurs) {
  auto claim = ClaimOutputFolder(P("sub"), "job-a", 2);
  ASSERT_TRUE(claim.ok()) << claim.status().message();
  EXPECT_NE(FolderHolder(P("sub")).find("job-a"), std::string::npos);
  Status s = CheckOutputs({{}, {}, {P("sub/trace.json")}, {}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("in use by another genie job or simulation"), std::string::npos)
      << s.message();
  EXPECT_TRUE(CheckOutputs({{}, {}, {P("sub/trace.json")}, {P("sub")}}).ok());
  claim->reset();
  EXPECT_EQ(FolderHolder(P("sub")), "");
  EXPECT_TRUE(CheckOutputs({{}, {}, {P("sub/trace.json")}, {}}).ok());
}

TEST_F(OutputGuardTest, MakeOutputFolderNamesTheRealCause) {
  EXPECT_TRUE(MakeOutputFolder(P("a/b/c")).ok());
  EXPECT_TRUE(fs::is_directory(P("a/b/c")));
  std::ofstream(P("file")) << "x";
  Status file = MakeOutputFolder(P("file/sub"));
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.message().find("is not a folder"), std::string::npos) << file.message();
  if (::geteuid() != 0) {  // root writes anywhere
    ::chmod(dir_.c_str(), 0555);
    Status denied = MakeOutputFolder(P("new/sub"));
    ASSERT_FALSE(denied.ok());
    EXPECT_NE(denied.message().find("permission denied: " + P("new")), std::string::npos)
        << denied.message();
  }
}

}  // namespace
}  // namespace genie::record
