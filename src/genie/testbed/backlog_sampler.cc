#include "genie/testbed/backlog_sampler.h"

#include <fcntl.h>
#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace genie::testbed {
namespace {

// The namespace this thread is in, to come back to.
class NetnsGuard {
 public:
  NetnsGuard() : self_(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) {}
  ~NetnsGuard() {
    if (self_ >= 0) {
      (void)::setns(self_, CLONE_NEWNET);
      ::close(self_);
    }
  }
  bool ok() const { return self_ >= 0; }

 private:
  int self_;
};

}  // namespace

Result<std::unique_ptr<BacklogSampler>> BacklogSampler::Open(const std::vector<QueueEnd>& ends) {
  std::unique_ptr<BacklogSampler> s(new BacklogSampler());
  s->ends_ = ends.size();
  NetnsGuard back;
  if (!back.ok()) return Status::IoError(std::string("cannot open this thread's network namespace: ") + std::strerror(errno));
  std::map<std::string, size_t> by_netns;
  for (size_t i = 0; i < ends.size(); ++i) {
    const QueueEnd& e = ends[i];
    const int target = ::open(("/run/netns/" + e.netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (target < 0 || ::setns(target, CLONE_NEWNET) != 0) {
      const std::string why = std::strerror(errno);
      if (target >= 0) ::close(target);
      return Status::Unavailable("cannot enter network namespace " + e.netns + " (" + why +
                                 "): is the testbed up, and are you root?");
    }
    ::close(target);
    auto [it, fresh] = by_netns.try_emplace(e.netns, s->namespaces_.size());
    if (fresh) {
      Namespace ns;
      ns.fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
      if (ns.fd < 0) return Status::IoError("netlink socket in " + e.netns + ": " + std::strerror(errno));
      s->namespaces_.push_back(std::move(ns));
    }
    const unsigned index = ::if_nametoindex(e.ifname.c_str());
    if (index == 0) return Status::NotFound("no interface " + e.ifname + " in " + e.netns);
    s->namespaces_[it->second].ends[static_cast<int>(index)] = i;
  }
  return s;
}

BacklogSampler::~BacklogSampler() {
  if (running_) (void)Stop();
  for (auto& ns : namespaces_)
    if (ns.fd >= 0) ::close(ns.fd);
}

void BacklogSampler::Start() {
  if (running_) return;
  sums_.assign(ends_, 0);
  samples_ = 0;
  running_ = true;
  thread_ = std::thread([this] { Loop(); });
}

std::vector<double> BacklogSampler::Stop() {
  if (!running_) return std::vector<double>(ends_, 0);
  running_ = false;
  thread_.join();
  std::vector<double> mean(ends_, 0);
  for (size_t i = 0; i < ends_ && samples_ > 0; ++i) mean[i] = sums_[i] / static_cast<double>(samples_);
  return mean;
}

void BacklogSampler::Loop() {
  while (running_) {
    for (auto& ns : namespaces_) (void)Sample(ns, sums_);
    ++samples_;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

bool BacklogSampler::Sample(Namespace& ns, std::vector<double>& into) {
  struct {
    nlmsghdr h;
    tcmsg t;
  } request{};
  request.h.nlmsg_len = sizeof(request);
  request.h.nlmsg_type = RTM_GETQDISC;
  request.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.t.tcm_family = AF_UNSPEC;
  if (::send(ns.fd, &request, sizeof(request), 0) < 0) return false;
  alignas(nlmsghdr) char buf[32768];
  for (;;) {
    const ssize_t got = ::recv(ns.fd, buf, sizeof(buf), 0);
    if (got <= 0) return false;
    auto len = static_cast<unsigned>(got);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
      if (h->nlmsg_type == NLMSG_DONE) return true;
      if (h->nlmsg_type == NLMSG_ERROR) return false;
      if (h->nlmsg_type != RTM_NEWQDISC) continue;
      const auto* t = static_cast<const tcmsg*>(NLMSG_DATA(h));
      if (t->tcm_parent != TC_H_ROOT) continue;
      auto end = ns.ends.find(t->tcm_ifindex);
      if (end == ns.ends.end()) continue;
      int left = static_cast<int>(h->nlmsg_len) - static_cast<int>(NLMSG_LENGTH(sizeof(tcmsg)));
      for (auto* a = reinterpret_cast<const rtattr*>(reinterpret_cast<const char*>(t) +
                                                     NLMSG_ALIGN(sizeof(tcmsg)));
           RTA_OK(a, left); a = RTA_NEXT(a, left)) {
        if (a->rta_type != TCA_STATS2) continue;
        int inner = static_cast<int>(RTA_PAYLOAD(a));
        for (auto* q = static_cast<const rtattr*>(RTA_DATA(a)); RTA_OK(q, inner); q = RTA_NEXT(q, inner)) {
          if (q->rta_type != TCA_STATS_QUEUE || RTA_PAYLOAD(q) < sizeof(gnet_stats_queue)) continue;
          gnet_stats_queue stats;
          std::memcpy(&stats, RTA_DATA(q), sizeof(stats));
          into[end->second] += stats.backlog;
        }
      }
    }
  }
}

}  // namespace genie::testbed
