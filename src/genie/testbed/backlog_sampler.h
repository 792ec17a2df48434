// BacklogSampler: how many bytes wait in the egress queue of chosen testbed link ends, sampled
// every millisecond while it runs, averaged over the time between Start() and Stop(). A link
// end that is slower than what reaches it keeps a queue for as long as traffic crosses it; a
// healthy one downstream of it, fed at the slower rate, keeps none; a healthy one fed at its
// own rate only holds a burst now and then. That tells which of two links carrying the same
// flows held them (report/path_blame.h) where the bytes they sent cannot.
//
// The queue is the root qdisc's backlog (tbf, or htb with its classes), read over rtnetlink
// from sockets opened inside each switch's network namespace (setns, so root), not by running
// `tc`: a process per read would sample a 100 ms transfer once or twice. Start/Stop from one
// thread; the sampling runs on its own thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "genie/common/status.h"

namespace genie::testbed {

struct QueueEnd {
  std::string netns;   // NAME-l0
  std::string ifname;  // s1
};

class BacklogSampler {
 public:
  // Opens a netlink socket in each end's namespace; fails (not root, a namespace gone) naming it.
  static Result<std::unique_ptr<BacklogSampler>> Open(const std::vector<QueueEnd>& ends);
  ~BacklogSampler();
  BacklogSampler(const BacklogSampler&) = delete;
  BacklogSampler& operator=(const BacklogSampler&) = delete;

  void Start();
  // The mean backlog (bytes) of each end, in the order given to Open, since Start().
  std::vector<double> Stop();

 private:
  struct Namespace {
    int fd = -1;  // NETLINK_ROUTE socket in that namespace
    std::map<int, size_t> ends;  // ifindex -> index into the ends
  };
  BacklogSampler() = default;
  void Loop();
  bool Sample(Namespace& ns, std::vector<double>& into);

  std::vector<Namespace> namespaces_;
  size_t ends_ = 0;
  std::vector<double> sums_;
  long samples_ = 0;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace genie::testbed
