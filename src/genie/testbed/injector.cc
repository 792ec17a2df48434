#include "genie/testbed/injector.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "genie/testbed/commands.h"
#include "genie/testbed/control.h"

namespace genie::testbed {

namespace {

std::string Key(const LinkEnd& e) { return e.netns + "/" + e.ifname; }

std::string LinkList(const Layout& layout) {
  std::string s;
  const size_t shown = std::min<size_t>(layout.links.size(), 6);
  for (size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + layout.links[i].id;
  if (layout.links.size() > shown) s += ", ...";
  return s;
}

bool IsDelayHelper(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  return cmdline.find(" netdelay ") != std::string::npos;
}

bool Alive(int pid) {
  if (kill(pid, 0) != 0) return false;
  int status = 0;
  return waitpid(pid, &status, WNOHANG) == 0 || errno == ECHILD;
}

// SIGTERM, then SIGKILL if it is still there after a second; reaps it when it is our child.
void Stop(int pid) {
  kill(pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && kill(pid, 0) != 0)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace

std::vector<FaultAction> Expand(const Fault& f) {
  std::vector<FaultAction> out;
  if (f.kind == FaultKind::kFlap) {
    Fault down = f;
    down.kind = FaultKind::kDown;
    down.duration = 0;
    for (int i = 0; i < f.flaps; ++i) {
      out.push_back({i * f.period, down, false});
      out.push_back({i * f.period + f.period / 2, down, true});
    }
    return out;
  }
  out.push_back({0, f, false});
  if (f.duration > 0 && f.kind != FaultKind::kUp) out.push_back({f.duration, f, true});
  return out;
}

Injector::Injector(Layout layout, Shell& shell, std::string genie_binary)
    : layout_(std::move(layout)), shell_(shell), genie_(std::move(genie_binary)) {
  if (genie_.empty()) {
    std::error_code ec;
    genie_ = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  }
  for (const auto& l : layout_.links) {
    shaping_[Key(l.a)] = {l.rate_bps, l.queue_bytes};
    shaping_[Key(l.b)] = {l.rate_bps, l.queue_bytes};
  }
}

Status Injector::Check(const Fault& f) const {
  GENIE_RETURN_IF_ERROR(ValidateFault(f));
  if (layout_.FindLink(f.link) == nullptr) {
    return Status::InvalidArgument("testbed '" + layout_.name() + "' has no link '" + f.link +
                                   "' (its links: " + LinkList(layout_) + ")");
  }
  return Status::Ok();
}

std::vector<const LinkEnd*> Injector::Senders(const Link& l, Direction d) const {
  if (d == Direction::kOut) return {&l.a};
  if (d == Direction::kIn) return {&l.b};
  return {&l.a, &l.b};
}

std::vector<const LinkEnd*> Injector::Receivers(const Link& l, Direction d) const {
  if (d == Direction::kOut) return {&l.b};
  if (d == Direction::kIn) return {&l.a};
  return {&l.b, &l.a};
}

Status Injector::Shape(const Link& link, const LinkEnd& end, Shaping s) {
  for (const auto& cmd : ShapeCommands(layout_, link, end, s.rate_bps, BurstFor(s.rate_bps), s.queue_bytes,
                                       ShapeStep::kChange)) {
    GENIE_RETURN_IF_ERROR(shell_.Must(cmd));
  }
  shaping_[Key(end)] = s;
  return Status::Ok();
}

int Injector::QueueNumber(const Link& link, const LinkEnd& at) const {
  // One queue per link end, stable across processes (the CLI applies and clears in different
  // ones): 1000 + 2 * link index + which end.
  const size_t index = static_cast<size_t>(&link - layout_.links.data());
  return 1000 + static_cast<int>(2 * index) + (&at == &link.b ? 1 : 0);
}

Status Injector::Rule(const Link& link, const LinkEnd& at, const Fault& f, bool add) {
  Argv rule = {"iptables", "-w", "-t", "mangle", add ? "-A" : "-D", "PREROUTING"};
  if (!at.bridge.empty()) {
    // A bridge port: bridged frames reach iptables only through br_netfilter.
    if (add) {
      GENIE_RETURN_IF_ERROR(shell_.Must(
          InNamespace(at.netns, {"sysctl", "-q", "-w", "net.bridge.bridge-nf-call-iptables=1"})));
    }
    for (const char* w : {"-m", "physdev", "--physdev-in"}) rule.push_back(w);
  } else {
    rule.push_back("-i");
  }
  rule.push_back(at.ifname);
  if (f.kind == FaultKind::kLoss) {
    char p[32];
    std::snprintf(p, sizeof(p), "%.6f", f.loss);
    for (const char* w : {"-m", "statistic", "--mode", "random", "--probability"}) rule.push_back(w);
    rule.push_back(p);
    rule.push_back("-j");
    rule.push_back("DROP");
  } else {
    for (const char* w : {"-j", "NFQUEUE", "--queue-num"}) rule.push_back(w);
    rule.push_back(std::to_string(QueueNumber(link, at)));
    rule.push_back("--queue-bypass");
  }
  return shell_.Must(InNamespace(at.netns, rule));
}

Status Injector::StartDelayHelper(const LinkEnd& at, int queue, const Fault& f) {
  const std::string key = at.netns + "/" + std::to_string(queue);
  StopDelayHelper(at, queue);
  std::error_code ec;
  std::filesystem::create_directories(StateDir(), ec);
  const std::string log = StateDir() + "/" + layout_.name() + ".netdelay-" + at.netns + "-" +
                          std::to_string(queue) + ".log";
  Argv argv = {"ip", "netns", "exec", at.netns, genie_, "netdelay", "--queue",
               std::to_string(queue), "--delay", std::to_string(f.delay) + "ns", "--jitter",
               std::to_string(f.jitter) + "ns"};
  pid_t pid = fork();
  if (pid < 0) return Status::Internal("fork for the delay helper failed");
  if (pid == 0) {
    setsid();
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  // The helper binds its queue at once; give it a moment, then make sure it is running.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  if (!Alive(pid)) {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    waitpid(pid, nullptr, WNOHANG);
    return Status::Internal("the delay helper (`" + ToString(argv) + "`) exited: " + text);
  }
  helpers_[key] = pid;
  return Status::Ok();
}

void Injector::StopDelayHelper(const LinkEnd& at, int queue) {
  auto it = helpers_.find(at.netns + "/" + std::to_string(queue));
  if (it == helpers_.end()) return;
  Stop(it->second);
  helpers_.erase(it);
}

Status Injector::Apply(const Fault& f) { return Set(f, /*on=*/true); }

Status Injector::Undo(const Fault& f) { return Set(f, /*on=*/false); }

Status Injector::Set(const Fault& f, bool on) {
  GENIE_RETURN_IF_ERROR(Check(f));
  const Link& link = *layout_.FindLink(f.link);
  switch (f.kind) {
    case FaultKind::kRate:
      for (const LinkEnd* e : Senders(link, f.direction)) {
        const uint64_t rate = on ? f.rate_bps : link.rate_bps;
        GENIE_RETURN_IF_ERROR(Shape(link, *e, {rate, shaping_[Key(*e)].queue_bytes}));
      }
      return Status::Ok();
    case FaultKind::kQueue:
      for (const LinkEnd* e : Senders(link, f.direction)) {
        const Bytes queue = on ? f.queue_bytes : link.queue_bytes;
        GENIE_RETURN_IF_ERROR(Shape(link, *e, {shaping_[Key(*e)].rate_bps, queue}));
      }
      return Status::Ok();
    case FaultKind::kLoss:
      // A veth passes TCP's 64 KiB GSO packets whole, so a rule would drop ~45 frames at a time:
      // as often on average, but a 4 MiB transfer then sees 0 or 3 losses where a real link
      // drops ~60 single frames. The sending end cuts packets to two frames, dropped together.
      for (const LinkEnd* e : Senders(link, f.direction)) GENIE_RETURN_IF_ERROR(SetFrames(*e, on));
      for (const LinkEnd* e : Receivers(link, f.direction)) GENIE_RETURN_IF_ERROR(Rule(link, *e, f, on));
      return Status::Ok();
    case FaultKind::kDelay:
      for (const LinkEnd* e : Receivers(link, f.direction)) {
        if (on) {
          GENIE_RETURN_IF_ERROR(StartDelayHelper(*e, QueueNumber(link, *e), f));
          GENIE_RETURN_IF_ERROR(Rule(link, *e, f, true));
        } else {
          // The rule goes first, so no packet waits on a queue whose helper is gone.
          Status st = Rule(link, *e, f, false);
          StopDelayHelper(*e, QueueNumber(link, *e));
          GENIE_RETURN_IF_ERROR(st);
        }
      }
      return Status::Ok();
    case FaultKind::kDown:
      return SetLink(link, !on);
    case FaultKind::kUp:
      return on ? SetLink(link, true) : Status::Ok();
    case FaultKind::kFlap:
      if (on) return Status::InvalidArgument("a flap is a sequence: Expand() it into down/up actions");
      return SetLink(link, true);
  }
  return Status::Ok();
}

Status Injector::SetFrames(const LinkEnd& end, bool frames) {
  // gso_max_segs: the stack builds packets of at most that many frames there, and forwarded
  // GSO packets are cut in software as they leave it. 2, not 1: at 1 the kernel gives up GSO
  // and a 1 Gbit/s sender measured 360 Mbit/s on a 2-core machine (2: 951, like 65535, a
  // veth's default).
  return shell_.Must({"ip", "-n", end.netns, "link", "set", end.ifname, "gso_max_segs",
                      frames ? "2" : "65535"});
}

Status Injector::SetLink(const Link& link, bool up) {
  return shell_.Must({"ip", "-n", link.b.netns, "link", "set", link.b.ifname, up ? "up" : "down"});
}

Status Injector::ClearAll() {
  Status first;
  auto note = [&](const Status& st) {
    if (first.ok() && !st.ok()) first = st;
  };
  for (const auto& ns : layout_.Namespaces()) {
    // Rules first, so that no packet waits on a queue whose helper is gone.
    CommandResult r = shell_.Run(InNamespace(ns, {"iptables", "-w", "-t", "mangle", "-F", "PREROUTING"}));
    (void)r;  // no iptables installed: then no rule was ever added either
  }
  for (auto& [key, pid] : helpers_) Stop(pid);
  helpers_.clear();
  for (const auto& ns : layout_.Namespaces()) StopProcessesIn(ns, shell_, IsDelayHelper);
  for (const auto& sw : layout_.switches) {
    if (sw.role == "spine") continue;
    shell_.Run(InNamespace(sw.netns, {"sysctl", "-q", "-w", "net.bridge.bridge-nf-call-iptables=0"}));
  }
  for (const auto& l : layout_.links) {
    for (const LinkEnd* e : {&l.a, &l.b}) {
      note(Shape(l, *e, {l.rate_bps, l.queue_bytes}));
      note(SetFrames(*e, false));
    }
    note(SetLink(l, true));
  }
  return first;
}

}  // namespace genie::testbed
