#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

namespace genie::testing {
namespace {

namespace fs = std::filesystem;

bool KeepAlways() { return getenv("GENIE_KEEP_TEST_DIRS") != nullptr; }

// Removes `dir`, or says where it is kept.
void Release(const fs::path& dir, bool keep) {
  if (keep) {
    fprintf(stderr, "test files kept in %s\n", dir.c_str());
    return;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

fs::path Fresh(const std::string& leaf) {
  const fs::path dir = fs::temp_directory_path() / leaf;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  return dir;
}

// The directories FreshDir made, released when the test program exits. Constructed on the
// first FreshDir, so destroyed before gtest's UnitTest.
class FreshDirs {
 public:
  void Add(const fs::path& dir) {
    std::lock_guard<std::mutex> lock(mu_);
    dirs_.push_back(dir);
  }
  ~FreshDirs() {
    const bool keep = KeepAlways() || !::testing::UnitTest::GetInstance()->Passed();
    for (const auto& dir : dirs_) Release(dir, keep);
  }

 private:
  std::mutex mu_;
  std::vector<fs::path> dirs_;
};

}  // namespace

TempDir::TempDir(const std::string& name) {
  static std::atomic<int> made{0};
  path_ =
      Fresh("genie-test-" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(made++))
          .string();
}

TempDir::~TempDir() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const bool failed = test != nullptr && test->result()->Failed();
  Release(path_, KeepAlways() || failed);
}

std::string FreshDir(const std::string& name) {
  static FreshDirs made;
  const fs::path dir = Fresh("genie-test-" + name + "-" + std::to_string(::getpid()));
  made.Add(dir);
  return dir.string();
}

}  // namespace genie::testing
