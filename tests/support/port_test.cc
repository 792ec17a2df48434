// FreeTcpPort: a port below the ephemeral range that can be listened on.
#include "tests/support/port.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace genie::testing {
namespace {

TEST(PortTest, IsBelowTheEphemeralRangeAndBindable) {
  const int port = FreeTcpPort();
  ASSERT_GE(port, 20000);
  ASSERT_LE(port, 32000);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  close(fd);
}

}  // namespace
}  // namespace genie::testing
