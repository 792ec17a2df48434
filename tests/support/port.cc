#include "tests/support/port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <random>

namespace genie::testing {

// A port below the kernel's ephemeral range (ip_local_port_range, 32768-60999 by default):
// an ephemeral one, free when picked, is soon taken by some parallel test's outgoing
// connection or port-0 listener. Picked at random per process and checked bindable.
int FreeTcpPort() {
  static std::mutex mu;
  static std::mt19937 pick(static_cast<unsigned>(getpid()) ^
                           static_cast<unsigned>(std::random_device{}()));
  std::uniform_int_distribution<int> port(20000, 32000);
  for (int attempt = 0; attempt < 200; ++attempt) {
    int p;
    {
      std::lock_guard<std::mutex> lock(mu);
      p = port(pick);
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(p));
    const bool free = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    close(fd);
    if (free) return p;
  }
  return 0;
}

}  // namespace genie::testing
