#include "genie/report/output_paths.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace genie::report {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;

TEST(OutputPathsTest, AnOutputNamingAnInputByAnyPathIsRefused) {
  const TempDir tmp("output-paths");
  const fs::path dir = tmp.path();
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "rank-0.jsonl") << "x\n";
  fs::create_symlink(dir / "rank-0.jsonl", dir / "link.jsonl");
  const std::string in = (dir / "rank-0.jsonl").string();

  for (const fs::path& out :
       {dir / "rank-0.jsonl", dir / "sub" / ".." / "rank-0.jsonl", dir / "link.jsonl"}) {
    Status s = CheckOutputsAreNotInputs({out.string()}, {in});
    ASSERT_FALSE(s.ok()) << out;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find("refusing to write " + out.string()), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find(in), std::string::npos) << s.message();
  }
  EXPECT_TRUE(CheckOutputsAreNotInputs({(dir / "merged.json").string()}, {in}).ok());
  Status twice =
      CheckOutputsAreNotInputs({(dir / "m.json").string(), (dir / "sub/../m.json").string()}, {in});
  EXPECT_FALSE(twice.ok());
}

}  // namespace
}  // namespace genie::report
