#include "genie/record/tcp_timeouts.h"

#include <gtest/gtest.h>

namespace genie::record {
namespace {

TEST(TcpTimeouts, ReadFromTheTcpExtLines) {
  const std::string text =
      "TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes\n"
      "TcpExt: 0 42 7\n"
      "IpExt: InNoRoutes\n"
      "IpExt: 3\n";
  EXPECT_EQ(ParseTcpTimeouts(text), 42);
}

TEST(TcpTimeouts, MissingOrMalformedIsNone) {
  EXPECT_EQ(ParseTcpTimeouts(""), std::nullopt);
  EXPECT_EQ(ParseTcpTimeouts("TcpExt: SyncookiesSent\nTcpExt: 0\n"), std::nullopt);
  EXPECT_EQ(ParseTcpTimeouts("TcpExt: TCPTimeouts\nTcpExt: x1\n"), std::nullopt);
  EXPECT_EQ(ParseTcpTimeouts("TcpExt: TCPTimeouts\n"), std::nullopt);
}

// This machine's own: a count, and a namespace to tell hosts apart by.
TEST(TcpTimeouts, ThisNamespacesCounterAndId) {
  const auto t = ReadTcpTimeouts();
  if (!t) GTEST_SKIP() << "no /proc/net/netstat with TCPTimeouts here";
  EXPECT_GE(*t, 0);
  EXPECT_GT(HostId(), 0);
  EXPECT_EQ(HostId(), HostId());
}

}  // namespace
}  // namespace genie::record
