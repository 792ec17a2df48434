#include "genie/testbed/shell.h"

#include <fcntl.h>
#include <poll.h>
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
  std::string out = r.errors.empty() ? r.output : r.errors;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return Status::Internal("`" + ToString(argv) + "` failed (exit " + std::to_string(r.exit_code) +
                          ")" + (out.empty() ? "" : ": " + out));
}

Result<std::string> Shell::Output(const Argv& argv) {
  CommandResult r = Run(argv);
  if (r.exit_code != 0) {
    return Status::Internal("`" + ToString(argv) + "` failed (exit " +
                            std::to_string(r.exit_code) + "): " + r.errors + r.output);
  }
  return r.output;
}

CommandResult SystemShell::Run(const Argv& argv) {
  CommandResult result;
  if (argv.empty()) return result;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    result.errors = std::string("pipe: ") + strerror(errno);
    return result;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    result.errors = std::string("pipe: ") + strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    result.errors = argv[0] + ": " + strerror(rc);
    return result;
  }
  // Both pipes are read together so that a chatty stderr cannot block the child.
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.output, &result.errors};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CommandResult RecordingShell::Run(const Argv& argv) {
  commands.push_back(argv);
  return {0, "", ""};
}

}  // namespace genie::testbed
