#include "genie/testbed/control.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "genie/testbed/commands.h"

namespace genie::testbed {

namespace fs = std::filesystem;

namespace {

// Holds an exclusive lock on StateDir()/NAME.lock for its lifetime. The file lives as long as
// the testbed's description: released with none there (never built, taken down, refused), the
// lock deletes it first, so that names used once (tests, benchmarks) leave nothing behind. A
// process that was waiting on the deleted file then holds a lock nobody else can see: it finds
// its file no longer at the path and locks the path's new file instead.
class NameLock {
 public:
  explicit NameLock(const std::string& name)
      : name_(name), path_(StateDir() + "/" + name + ".lock") {
    std::error_code ec;
    fs::create_directories(StateDir(), ec);
    for (int tries = 0; tries < 100; ++tries) {
      fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd_ < 0) return;  // unlocked; the commands it guards report the state dir
      if (flock(fd_, LOCK_EX) == 0 && StillNamed()) return;
      close(fd_);  // deleted while this one waited: lock the path's new file
      fd_ = -1;
    }
  }
  ~NameLock() {
    if (fd_ < 0) return;
    std::error_code ec;
    if (!fs::exists(DescriptionPath(name_), ec)) unlink(path_.c_str());  // still holding it
    close(fd_);
  }
  NameLock(const NameLock&) = delete;
  NameLock& operator=(const NameLock&) = delete;

 private:
  // The path still names the file this lock holds.
  bool StillNamed() const {
    struct stat held {};
    struct stat named {};
    return fstat(fd_, &held) == 0 && stat(path_.c_str(), &named) == 0 &&
           named.st_ino == held.st_ino && named.st_dev == held.st_dev;
  }

  std::string name_, path_;
  int fd_ = -1;
};

Status WriteDescription(const Layout& layout) {
  const std::string path = DescriptionPath(layout.name());
  const std::string tmp = path + ".tmp";
  env::Env* env = env::Env::Default();
  if (!env->WriteFile(tmp, layout.ToJson().dump(2) + "\n").ok()) {
    return Status::IoError(tmp + ": cannot write the testbed description");
  }
  if (!env->RenameFile(tmp, path).ok()) {
    return Status::IoError(path + ": cannot write the testbed description");
  }
  return Status::Ok();
}

}  // namespace

void StopProcessesIn(const std::string& ns, Shell& shell, const std::function<bool(int)>& only) {
  auto pids = shell.Output({"ip", "netns", "pids", ns});
  if (!pids.ok()) return;
  std::vector<int> targets;
  std::istringstream in(*pids);
  for (int pid = 0; in >> pid;) {
    if (pid > 1 && pid != getpid() && (!only || only(pid))) targets.push_back(pid);
  }
  auto alive = [&] {
    return std::any_of(targets.begin(), targets.end(), [](int pid) { return kill(pid, 0) == 0; });
  };
  for (int pid : targets) kill(pid, SIGTERM);
  for (int i = 0; i < 20 && alive(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int pid : targets) kill(pid, SIGKILL);  // those still there
}

std::string StateDir(env::Env* env) {
  if (env == nullptr) env = env::Env::Default();
  const std::string dir = env->GetEnv("GENIE_TESTBED_DIR").value_or("");
  return !dir.empty() ? dir : "/run/genie/testbeds";
}

std::string DescriptionPath(const std::string& name) { return StateDir() + "/" + name + ".json"; }

Status CheckCanBuild(Shell& shell) {
  if (geteuid() != 0) {
    return Status::Unsupported(
        "genie testbed needs root to create network namespaces (run it with sudo); nothing was "
        "changed");
  }
  for (const char* tool : {"ip", "tc"}) {
    CommandResult r = shell.Run({tool, "-V"});
    if (r.exit_code != 0) {
      return Status::Unsupported(std::string("genie testbed needs `") + tool +
                                 "` (Debian package iproute2); nothing was changed");
    }
  }
  CommandResult r = shell.Run({"ip", "netns", "list"});
  if (r.exit_code != 0) {
    return Status::Unsupported("network namespaces are not available here (`ip netns list`: " +
                               r.errors + "); nothing was changed");
  }
  return Status::Ok();
}

std::vector<std::string> NamespacesOf(const std::string& name, Shell& shell) {
  std::vector<std::string> out;
  auto list = shell.Output({"ip", "netns", "list"});
  if (!list.ok()) return out;
  const std::regex mine(name + R"(-(h[0-9]+|sw|l[0-9]+|s[0-9]+))");
  std::istringstream in(*list);
  std::string line;
  while (std::getline(in, line)) {
    std::string ns = line.substr(0, line.find(' '));
    if (std::regex_match(ns, mine)) out.push_back(ns);
  }
  return out;
}

// Only the machine's own namespace may make a congestion control outside
// net.ipv4.tcp_allowed_congestion_control a namespace's default: the testbed's is added to that
// list (a permission only; the machine's own default stays as it is).
Status AllowCongestion(const std::string& name, Shell& shell, std::string* log) {
  if (name.empty()) return Status::Ok();
  auto allowed = shell.Output({"sysctl", "-n", "net.ipv4.tcp_allowed_congestion_control"});
  if (!allowed.ok()) return allowed.status();
  std::istringstream in(*allowed);
  std::string list, item;
  while (in >> item) {
    if (item == name) return Status::Ok();
    list += item + " ";
  }
  const Argv cmd = {"sysctl", "-q", "-w", "net.ipv4.tcp_allowed_congestion_control=" + list + name};
  if (log) *log += ToString(cmd) + "\n";
  CommandResult r = shell.Run(cmd);
  if (r.exit_code == 0) return Status::Ok();
  auto available = shell.Output({"sysctl", "-n", "net.ipv4.tcp_available_congestion_control"});
  std::string names;
  std::istringstream words(available.ok() ? *available : "?");
  for (std::string w; words >> w;) names += (names.empty() ? "" : " ") + w;
  return Status::InvalidArgument("tcp_congestion: this kernel has no '" + name +
                                 "' (available: " + names + "; a module such as tcp_" + name +
                                 " may need loading); nothing was changed");
}

Result<Layout> Up(const TestbedSpec& spec, Shell& shell, std::string* log) {
  GENIE_ASSIGN_OR_RETURN(Layout layout, LayOut(spec));
  GENIE_RETURN_IF_ERROR(CheckCanBuild(shell));
  NameLock lock(spec.name);
  if (fs::exists(DescriptionPath(spec.name)) || !NamespacesOf(spec.name, shell).empty()) {
    return Status::InvalidArgument("testbed '" + spec.name + "' exists; `genie testbed down " +
                                   spec.name + "` removes it, or pick another --name");
  }
  GENIE_RETURN_IF_ERROR(AllowCongestion(spec.tcp_congestion, shell, log));
  auto undo = [&] {  // a failed build removes what it made
    for (const auto& ns : NamespacesOf(spec.name, shell)) shell.Run({"ip", "netns", "del", ns});
  };
  for (const Argv& cmd : UpCommands(layout)) {
    if (log) *log += ToString(cmd) + "\n";
    Status st = shell.Must(cmd);
    if (!st.ok()) {
      undo();
      return Status::Internal("building testbed '" + spec.name + "': " + st.message() +
                              "; everything it had made was removed");
    }
  }
  if (layout.spec.tcp_congestion.empty()) {  // inherited: say which, for the record
    auto cc = shell.Output(
        InNamespace(layout.hosts[0].netns, {"sysctl", "-n", "net.ipv4.tcp_congestion_control"}));
    if (cc.ok()) {
      std::istringstream in(*cc);
      in >> layout.spec.tcp_congestion;
    }
  }
  Status st = WriteDescription(layout);
  if (!st.ok()) {
    undo();
    return st;
  }
  return layout;
}

Status Down(const std::string& name, Shell& shell) {
  GENIE_RETURN_IF_ERROR(CheckName(name));
  NameLock lock(name);
  const std::vector<std::string> namespaces = NamespacesOf(name, shell);
  const bool described = fs::exists(DescriptionPath(name));
  if (namespaces.empty() && !described) {
    return Status::NotFound("no testbed '" + name + "' (`genie testbed list` shows them)");
  }
  for (const auto& ns : namespaces) StopProcessesIn(ns, shell);
  std::string failed;
  for (const auto& ns : namespaces) {
    CommandResult r = shell.Run({"ip", "netns", "del", ns});
    if (r.exit_code != 0) failed += " " + ns + " (" + r.errors + ")";
  }
  std::error_code ec;
  fs::remove(DescriptionPath(name), ec);
  fs::remove(StateDir() + "/" + name + ".calibration.json", ec);  // calibration.h
  // The delay helpers' logs (injector.h).
  for (const auto& e : fs::directory_iterator(StateDir(), ec)) {
    if (e.path().filename().string().rfind(name + ".netdelay-", 0) == 0) fs::remove(e.path(), ec);
  }
  if (!failed.empty()) return Status::Internal("could not remove namespace(s):" + failed);
  return Status::Ok();
}

Result<Layout> Load(const std::string& name) {
  GENIE_RETURN_IF_ERROR(CheckName(name));
  const std::string path = DescriptionPath(name);
  const auto text = env::Env::Default()->ReadFile(path);
  if (!text.ok()) {
    return Status::NotFound("no testbed '" + name + "' (no " + path +
                            "); `genie testbed list` shows those that are up");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(path + ": not JSON (" + e.what() + "); `genie testbed down " + name +
                              "` removes the testbed");
  }
  return LayoutFromJson(j, path);
}

std::vector<std::string> List() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(StateDir(), ec)) {
    if (e.path().extension() == ".json" && e.path().stem().extension().empty()) {
      out.push_back(e.path().stem().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace genie::testbed
