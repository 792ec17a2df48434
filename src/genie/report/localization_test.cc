#include "genie/report/localization.h"

#include <gtest/gtest.h>

#include <string>

namespace genie::report {
namespace {

// The records a ring of n hosts writes (each host probes its two ring neighbours): every
// direction at `gbps` unless the host's transmit (tx) or receive (rx) side is slowed.
nlohmann::json RingRecords(int n, int slow_host, bool tx, bool rx) {
  nlohmann::json records = nlohmann::json::array();
  for (int me = 0; me < n; ++me) {
    nlohmann::json peers = nlohmann::json::array();
    for (int peer : {(me + 1) % n, (me + n - 1) % n}) {
      // Measured here, from `peer`: slow when the peer transmits slowly or this host receives so.
      const bool slow = (peer == slow_host && tx) || (me == slow_host && rx);
      nlohmann::json e = {{"peer", peer}, {"rx_gbps", slow ? 0.005 : 0.047}, {"retrans", 0.0}};
      if (me < peer) e["rtt_us"] = 120.0;
      peers.push_back(e);
    }
    records.push_back({{"rank", me}, {"host", "h" + std::to_string(me)},
                       {"bytes_per_direction", 1 << 20}, {"peers", peers}});
  }
  return records;
}

std::string Kinds(const Localization& l) {
  std::string out;
  for (const auto& f : l.verdict.findings) {
    out += std::string(out.empty() ? "" : " ") + FindingName(f.kind) + ":" +
           (f.host >= 0 ? l.scan.hosts[static_cast<size_t>(f.host)] : "-");
  }
  return out.empty() ? "healthy" : out;
}

TEST(Localization, AHealthyRingNamesNothing) {
  auto l = Localize(RingRecords(8, -1, false, false), 8);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(Kinds(*l), "healthy");
  EXPECT_EQ(l->pairs, 8);
  EXPECT_NE(FormatLocalization(*l).find("healthy"), std::string::npos);
}

// In a ring each host sends to one neighbour and hears from the other: the probe of both
// directions of each used pair tells the sender's transmit side from the receiver's side.
TEST(Localization, NamesTheSlowHostAndItsSideFromRingNeighboursOnly) {
  for (int host : {3, 7, 0}) {
    auto both = Localize(RingRecords(8, host, true, true), 8);
    auto tx = Localize(RingRecords(8, host, true, false), 8);
    auto rx = Localize(RingRecords(8, host, false, true), 8);
    ASSERT_TRUE(both.ok() && tx.ok() && rx.ok());
    const std::string h = "h" + std::to_string(host);
    EXPECT_EQ(Kinds(*both), "slow_link:" + h);
    EXPECT_EQ(Kinds(*tx), "slow_transmit:" + h);
    EXPECT_EQ(Kinds(*rx), "slow_receive:" + h);
  }
}

// Four hosts in a ring: a slow host's transfers are half of those measured. It is judged
// against the others' (not a median its own pull down), and the fabric is not called slow.
TEST(Localization, ASmallRingStillNamesOneHostAndNotTheFabric) {
  for (int host = 0; host < 4; ++host) {
    auto l = Localize(RingRecords(4, host, true, true), 4, /*expected_gbps=*/0.047, "testbed t");
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(Kinds(*l), "slow_link:h" + std::to_string(host));
    auto tx = Localize(RingRecords(4, host, true, false), 4, 0.047, "testbed t");
    EXPECT_EQ(Kinds(*tx), "slow_transmit:h" + std::to_string(host));
  }
}

TEST(Localization, AgainstTheExpectedRateTheWholeFabricCanBeSlow) {
  auto l = Localize(RingRecords(4, -1, false, false), 4, /*expected_gbps=*/0.094, "testbed t");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->verdict.findings.size(), 1u);
  EXPECT_EQ(l->verdict.findings[0].kind, FindingKind::kFabricSlow);
  EXPECT_EQ(LocalizationJson(*l)["expected_source"], "testbed t");
}

TEST(Localization, RanksSharingAHostAreToldApart) {
  auto records = RingRecords(4, -1, false, false);
  for (auto& r : records) r["host"] = "box";
  auto l = Localize(records, 4);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->scan.hosts[2], "box/r2");
}

// A job packed two ranks to a host: the pairs within a host measured the machine's loopback,
// never the fabric, so however slow they are they name nothing; the pairs across hosts judge.
TEST(Localization, PairsWithinAHostAreNotJudged) {
  auto records = RingRecords(8, -1, false, false);
  for (auto& r : records) {
    const int rank = r["rank"];
    r["host"] = "h" + std::to_string(rank / 2);
    for (auto& p : r["peers"]) {
      if (p["peer"].get<int>() / 2 == rank / 2) p["rx_gbps"] = 0.004;  // loopback under load
    }
  }
  auto l = Localize(records, 8);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->same_host_pairs, 4);
  EXPECT_EQ(Kinds(*l), "healthy");
  EXPECT_EQ(LocalizationJson(*l)["same_host_pairs"], 4);
  // A slow NIC is still named (both its ranks' cross-host directions are slow).
  for (auto& r : records) {
    const int rank = r["rank"];
    for (auto& p : r["peers"]) {
      const int peer = p["peer"];
      if (peer / 2 != rank / 2 && peer / 2 == 1) p["rx_gbps"] = 0.005;  // h1 transmits slowly
    }
  }
  auto slow = Localize(records, 8);
  ASSERT_TRUE(slow.ok());
  EXPECT_NE(Kinds(*slow), "healthy");
  EXPECT_NE(Kinds(*slow).find("h1"), std::string::npos) << Kinds(*slow);
}

// A ring of 8 on leafspine:2x2x4 crosses the fabric at h3 <-> h4 and h7 <-> h0; rank 0's record
// carries each probed direction's switch links. h3 -> h4 went up l0 -> s1, whose queue held it:
// that link is named with its direction, not the pair, and no host.
TEST(Localization, RankZerosPathsNameASlowSpineLink) {
  auto records = RingRecords(8, -1, false, false);
  for (auto& p : records[4]["peers"])
    if (p["peer"] == 3) p["rx_gbps"] = 0.012;
  auto path = [](int from, int to, const std::string& up, const std::string& spine,
                 const std::string& down, double held) {
    nlohmann::json crossings = nlohmann::json::array();
    if (!spine.empty()) {
      crossings.push_back({{"link", up + "-" + spine}, {"from", up}, {"to", spine}, {"share", 1.0},
                           {"held", held}});
      crossings.push_back({{"link", down + "-" + spine}, {"from", spine}, {"to", down},
                           {"share", 1.0}, {"held", 0.0}});
    }
    return nlohmann::json{{"from", from}, {"to", to}, {"crossings", crossings}};
  };
  nlohmann::json paths = nlohmann::json::array();
  for (int a = 0; a < 8; ++a) {
    const int b = (a + 1) % 8;
    if (a / 4 == b / 4) {
      paths.push_back(path(a, b, "", "", "", 0));
      paths.push_back(path(b, a, "", "", "", 0));
    }
  }
  paths.push_back(path(3, 4, "l0", "s1", "l1", 150000));
  paths.push_back(path(4, 3, "l1", "s0", "l0", 0));
  paths.push_back(path(7, 0, "l1", "s1", "l0", 0));
  paths.push_back(path(0, 7, "l0", "s0", "l1", 0));
  records[0]["paths"] = paths;
  auto l = Localize(records, 8);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(Kinds(*l), "slow_uplink:-");
  EXPECT_EQ(l->verdict.findings[0].link, "l0-s1");
  EXPECT_EQ(l->verdict.findings[0].direction, "l0 -> s1");
  EXPECT_EQ(LocalizationJson(*l)["paths"].size(), 16u);
  // Without rank 0's paths the same probe names the pair.
  records[0].erase("paths");
  EXPECT_EQ(Kinds(*Localize(records, 8)), "slow_pair:h3");
}

TEST(Localization, ARecordOfAnotherWorldIsAnError) {
  nlohmann::json records = nlohmann::json::array({{{"rank", 9}, {"peers", nlohmann::json::array()}}});
  auto l = Localize(records, 4);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("rank 9"), std::string::npos);
}

}  // namespace
}  // namespace genie::report
