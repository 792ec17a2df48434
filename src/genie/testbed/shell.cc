#include "genie/testbed/shell.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace genie::testbed {

std::string ToString(const Argv& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

Argv InNamespace(const std::string& ns, Argv argv) {
  Argv out = {"ip", "netns", "exec", ns};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

Status Shell::Must(const Argv& argv) {
  CommandResult r = Run(argv);
  if (r.exit_code == 0) return Status::Ok();
  std::string out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return Status::Internal("`" + ToString(argv) + "` failed (exit " + std::to_string(r.exit_code) +
                          ")" + (out.empty() ? "" : ": " + out));
}

Result<std::string> Shell::Output(const Argv& argv) {
  CommandResult r = Run(argv);
  if (r.exit_code != 0) {
    return Status::Internal("`" + ToString(argv) + "` failed (exit " +
                            std::to_string(r.exit_code) + "): " + r.output);
  }
  return r.output;
}

CommandResult SystemShell::Run(const Argv& argv) {
  CommandResult result;
  if (argv.empty()) return result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.output = std::string("pipe: ") + strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    result.output = argv[0] + ": " + strerror(rc);
    return result;
  }
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n > 0) {
      result.output.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CommandResult RecordingShell::Run(const Argv& argv) {
  commands.push_back(argv);
  return {0, ""};
}

}  // namespace genie::testbed
