#include "genie/driver/testbed_placement.h"

#include <fmt/format.h>
#include <unistd.h>

#include <climits>

#include "genie/driver/jobs_spec.h"
#include "genie/testbed/control.h"

namespace genie::driver {

std::string SelfExe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "genie";
  buf[n] = '\0';
  return buf;
}

Status PlaceOnTestbed(const std::string& name, int nodes, launch::LaunchOptions* o) {
  if (nodes != 1) {
    return Status::InvalidArgument(
        "a testbed is one machine: use -n for every rank, without --nnodes");
  }
  auto layout = testbed::Load(name);
  if (!layout.ok()) return layout.status();
  std::vector<int> rank_host, rank_nic;
  PlaceSingleJob(o->ranks, static_cast<int>(layout->hosts.size()),
                 static_cast<int>(layout->hosts.at(0).nics.size()), &rank_host, &rank_nic);
  for (int r = 0; r < o->ranks; ++r) {
    const auto& host = layout->hosts[static_cast<size_t>(rank_host[static_cast<size_t>(r)])];
    launch::RankSite site;
    site.netns = host.netns;
    const auto& nic = host.nics[static_cast<size_t>(rank_nic[static_cast<size_t>(r)])];
    site.env = {{"GENIE_BIND", nic.address}, {"GENIE_TESTBED", name}, {"GENIE_HOST", host.name}};
    o->sites.push_back(site);
  }
  if (o->rendezvous.empty()) {
    // h0's namespace is the testbed's own: a port there is free unless another job on this
    // testbed took it, which the launch nonce then tells apart.
    o->rendezvous = fmt::format("tcp:{}:{}", layout->RendezvousAddress(), 29500 + getpid() % 400);
  }
  return Status::Ok();
}

}  // namespace genie::driver
