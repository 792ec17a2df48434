// Scratch directories for tests, under /tmp. A test's files are kept when it fails, and named
// on stderr, so they can be read; GENIE_KEEP_TEST_DIRS=1 keeps them always. Two lifetimes:
// TempDir is one object's (a fixture member or a test's local), FreshDir the test program's.
// Test-only; any thread may call, each TempDir is owned by the thread that made it.
#pragma once

#include <string>

namespace genie::testing {

// A new empty directory /tmp/genie-test-NAME-PID-N, removed with the object unless the test
// running then has failed.
class TempDir {
 public:
  explicit TempDir(const std::string& name = "dir");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path()/relative
  std::string operator/(const std::string& relative) const { return path_ + "/" + relative; }

 private:
  std::string path_;
};

// A fresh empty directory for one test (/tmp/genie-test-NAME-PID; a second call with the same
// name empties it), removed when the test program ends with every test passed (kept, and named
// on stderr, when one failed).
std::string FreshDir(const std::string& name);

}  // namespace genie::testing
