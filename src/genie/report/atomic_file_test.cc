#include "genie/report/atomic_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/file.h"
#include "tests/support/temp_dir.h"

namespace genie::report {
namespace {

using ::genie::testing::ReadFile;
using ::genie::testing::TempDir;

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  // Files in the folder other than `keep`: a temporary file left behind would show here.
  int Others(const std::string& keep) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) n += e.path().filename() != keep;
    return n;
  }
  TempDir tmp_{"atomic-file"};
  fs::path dir_ = tmp_.path();
};

TEST_F(AtomicFileTest, WritesAndReplacesWholeFilesLeavingNoTemporaryFile) {
  const std::string p = (dir_ / "results.json").string();
  ASSERT_TRUE(WriteFileAtomically(p, "first\n").ok());
  EXPECT_EQ(ReadFile(p), "first\n");
  const std::string big(3 << 20, 'x');
  ASSERT_TRUE(WriteFileAtomically(p, big).ok());
  EXPECT_EQ(ReadFile(p), big);
  EXPECT_EQ(Others("results.json"), 0);
}

TEST_F(AtomicFileTest, AFailedWriteLeavesTheOldFileAsItWas) {
  // The target is a folder: the rename fails after the content was written elsewhere.
  fs::create_directories(dir_ / "taken" / "inside");
  Status s = WriteFileAtomically((dir_ / "taken").string(), "new");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kIoError);
  EXPECT_NE(s.message().find((dir_ / "taken").string()), std::string::npos) << s.message();
  EXPECT_TRUE(fs::is_directory(dir_ / "taken" / "inside"));
  EXPECT_EQ(Others("taken"), 0);  // the temporary file is gone

  Status missing = WriteFileAtomically((dir_ / "no" / "such" / "x.json").string(), "x");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("x.json"), std::string::npos);
}

}  // namespace
}  // namespace genie::report
