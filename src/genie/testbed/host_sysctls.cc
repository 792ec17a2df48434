#include "genie/testbed/host_sysctls.h"

#include <sstream>

namespace genie::testbed {

Result<std::vector<HostSysctls>> ReadHostSysctls(const Layout& layout, Shell& shell) {
  std::vector<HostSysctls> out;
  for (const auto& h : layout.hosts) {
    auto text = shell.Output(InNamespace(
        h.netns, {"sysctl", "-n", "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_ecn"}));
    if (!text.ok()) {
      return Status::Unavailable("host " + h.name + " (namespace " + h.netns +
                                 "): cannot read its TCP sysctls: " + text.status().message());
    }
    HostSysctls s{h.name, "", ""};
    std::istringstream in(*text);  // one value per line, in the order asked
    in >> s.tcp_congestion >> s.tcp_ecn;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace genie::testbed
