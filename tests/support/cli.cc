#include "tests/support/cli.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

namespace genie::testing {

CliResult RunCli(const std::string& command_line, Stderr stderr_mode) {
  CliResult r;
  int out[2], err[2];
  if (pipe(out) != 0) return r;
  if (pipe(err) != 0) {
    close(out[0]);
    close(out[1]);
    return r;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(stderr_mode == Stderr::kMerged ? out[1] : err[1], 2);
    close(out[0]);
    close(out[1]);
    close(err[0]);
    close(err[1]);
    execl("/bin/sh", "sh", "-c", command_line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  // Both pipes drained together: a child that fills one while we block on the other would
  // never finish.
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.output, &r.errors};
  int open_fds = 2;
  char buf[65536];
  while (pid > 0 && open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (pid < 0) return r;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return r;
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string GenieBinary() { return std::string(GENIE_BINARY_DIR) + "/tools/genie/genie"; }

std::string Data(const std::string& relative) {
  return std::string(GENIE_DATA_DIR) + "/" + relative;
}

std::string Source(const std::string& relative) {
  return std::string(GENIE_SOURCE_DIR) + "/" + relative;
}

namespace {

// The directories FreshDir made, removed when the test program exits with every test passed
// (a failure keeps them, and says where, for its files to be read); GENIE_KEEP_TEST_DIRS=1
// keeps them always. Constructed on the first FreshDir, so destroyed before gtest's UnitTest.
class FreshDirs {
 public:
  void Add(const std::filesystem::path& dir) { dirs_.push_back(dir); }
  ~FreshDirs() {
    const bool keep =
        getenv("GENIE_KEEP_TEST_DIRS") != nullptr || !::testing::UnitTest::GetInstance()->Passed();
    for (const auto& dir : dirs_) {
      std::error_code ec;
      if (keep) {
        fprintf(stderr, "test files kept in %s\n", dir.c_str());
      } else {
        std::filesystem::remove_all(dir, ec);
      }
    }
  }

 private:
  std::vector<std::filesystem::path> dirs_;
};

}  // namespace

std::string FreshDir(const std::string& name) {
  static FreshDirs made;
  auto dir = std::filesystem::temp_directory_path() /
             ("genie-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  made.Add(dir);
  return dir.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

long long SimulatedCycles(const std::string& args) {
  CliResult r = RunCli(GenieBinary() + " simulate " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::regex re(R"(sys\[(\d+)\] finished, (\d+) cycles)");
  long long cycles = -2;
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), re);
       it != std::sregex_iterator(); ++it) {
    const long long c = std::stoll((*it)[2]);
    if (cycles == -2) cycles = c;
    if (c != cycles) return -1;
  }
  return cycles;
}

}  // namespace genie::testing
