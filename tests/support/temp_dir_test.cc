// TempDir: removed with its object when the test passes, kept (and named on stderr) when it
// fails, so its files can be read.
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/support/cli.h"

namespace genie::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kFailOnPurpose[] = "GENIE_TEMP_DIR_TEST_FAIL";

TEST(TempDirTest, IsEmptyAndGoneWhenTheTestPasses) {
  std::string path;
  {
    const TempDir dir("temp-dir-test");
    path = dir.path();
    ASSERT_TRUE(fs::is_directory(path));
    EXPECT_TRUE(fs::is_empty(path));
    EXPECT_EQ(dir / "x", path + "/x");
    const TempDir other("temp-dir-test");
    EXPECT_NE(other.path(), path);
  }
  EXPECT_FALSE(fs::exists(path));
}

// Run only by the next test, in a child process: fails with a file in its TempDir.
TEST(TempDirTest, FailsOnPurpose) {
  if (getenv(kFailOnPurpose) == nullptr) GTEST_SKIP() << "run by KeptWhenTheTestFails";
  const TempDir dir("temp-dir-failed");
  std::ofstream(dir / "evidence") << "kept";
  ADD_FAILURE() << "on purpose";
}

TEST(TempDirTest, KeptWhenTheTestFails) {
  CliResult r = RunCli(std::string(kFailOnPurpose) + "=1 /proc/" + std::to_string(getpid()) +
                       "/exe --gtest_filter=TempDirTest.FailsOnPurpose");
  EXPECT_NE(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("test files kept in (\\S+)"))) << r.output;
  const fs::path kept = m[1].str();
  EXPECT_TRUE(fs::exists(kept / "evidence")) << kept;
  fs::remove_all(kept);
}

}  // namespace
}  // namespace genie::testing
