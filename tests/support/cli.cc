#include "tests/support/cli.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace genie::testing {

CliResult RunCli(const std::string& command_line) {
  CliResult r;
  FILE* p = ::popen(("(" + command_line + ") 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string GenieBinary() { return std::string(GENIE_BINARY_DIR) + "/tools/genie/genie"; }

std::string Data(const std::string& relative) {
  return std::string(GENIE_DATA_DIR) + "/" + relative;
}

std::string FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("genie-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace genie::testing
