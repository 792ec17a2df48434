#include "genie/real_backend/intra_host_model.h"

#include <gtest/gtest.h>

namespace genie::real_backend {
namespace {

config::NetworkConfig Switch(int n, double gbps, double latency) {
  config::NetworkConfig c;
  c.topology = {config::TopologyKind::kSwitch};
  c.npus_count = {n};
  c.bandwidth_gbps = {gbps};
  c.latency_ns = {latency};
  return c;
}

TEST(IntraHostModelTest, HostsAreBlocksOfConsecutiveRanks) {
  auto m = IntraHostModel::Create(Switch(4, 100, 500), 8);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->ranks_per_host(), 4);
  EXPECT_TRUE(m->SameHost(0, 3));
  EXPECT_TRUE(m->SameHost(4, 7));
  EXPECT_FALSE(m->SameHost(3, 4));
}

TEST(IntraHostModelTest, WorldNotAMultipleOfTheHostIsRefused) {
  auto m = IntraHostModel::Create(Switch(8, 100, 500), 12);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("multiple"), std::string::npos);
}

TEST(IntraHostModelTest, DelayIsAstraSimsAndTheSendersLinkSerialises) {
  auto m = IntraHostModel::Create(Switch(4, 1, 500), 8);  // 1 GB/s = 2^30/1e9 B/ns
  ASSERT_TRUE(m.ok());
  const Bytes mib = 1 << 20;
  const TimeNs ser = static_cast<TimeNs>(mib / (double(1 << 30) / 1e9));  // 976,562 ns
  // Switch: 2 hops of 500 ns, then the bytes.
  EXPECT_EQ(m->Deliver(4, 5, mib, 1000), 1000 + 1000 + ser);
  // A second message from rank 4 at the same instant waits for the first to leave its port.
  EXPECT_EQ(m->Deliver(4, 6, mib, 1000), 1000 + ser + 1000 + ser);
  // Another sender's port is free.
  EXPECT_EQ(m->Deliver(5, 4, mib, 1000), 1000 + 1000 + ser);
  // Once the port has drained, no queueing.
  EXPECT_EQ(m->Deliver(4, 7, 0, 10'000'000), 10'000'000 + 1000);
}

}  // namespace
}  // namespace genie::real_backend
