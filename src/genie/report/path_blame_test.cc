#include "genie/report/path_blame.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace genie::report {
namespace {

// A leaf-spine scan: every direction measured at 0.05 GB/s (+-5 %), its path known — up its
// leaf's link to the spine `hash` picks, down to the receiver's leaf — and a little of every
// link end's shaper held (a healthy fabric's bursts).
struct Fabric {
  int leaves = 2, spines = 2, per_leaf = 4;
  unsigned hash = 1;  // the ECMP hash's seed
  unsigned skew = 0;  // and how much more the sender weighs in it
  int Leaf(int h) const { return h / per_leaf; }
  int Spine(int a, int b) const {
    const auto ua = static_cast<unsigned>(a), ub = static_cast<unsigned>(b);
    return static_cast<int>((ua * (7u + skew) + ub * 3u + hash) % static_cast<unsigned>(spines));
  }
  int hosts() const { return leaves * per_leaf; }
};

DoctorScan Scan(const Fabric& f, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(0.95, 1.05);
  DoctorScan s;
  const int n = f.hosts();
  const auto N = static_cast<size_t>(n);
  for (int h = 0; h < n; ++h) s.hosts.push_back("h" + std::to_string(h));
  s.gbps.assign(N, std::vector<double>(N, std::nan("")));
  s.rtt_us = s.retrans = s.gbps;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const auto ia = static_cast<size_t>(a), ib = static_cast<size_t>(b);
      s.gbps[ia][ib] = 0.05 * noise(rng);
      s.retrans[ia][ib] = 0;
      s.rtt_us[ia][ib] = s.rtt_us[ib][ia] = b < a ? s.rtt_us[ib][ia] : 100 * noise(rng);
      TransferPath p{a, b, {}};
      if (f.Leaf(a) != f.Leaf(b)) {
        const std::string l = "l" + std::to_string(f.Leaf(a)), m = "l" + std::to_string(f.Leaf(b));
        const std::string sp = "s" + std::to_string(f.Spine(a, b));
        p.crossings.push_back({l + "-" + sp, l, sp, 0.99, 700});
        p.crossings.push_back({m + "-" + sp, sp, m, 0.99, 0});
      }
      s.paths.push_back(p);
    }
  }
  s.incast_gbps = 0.049;
  return s;
}

// Slows every direction crossing `from` -> `to` by `factor`; its end held `held` bytes meanwhile.
void SlowLink(DoctorScan& s, const std::string& from, const std::string& to, double factor,
              double held) {
  for (auto& p : s.paths) {
    for (auto& c : p.crossings) {
      if (c.from != from || c.to != to) continue;
      s.gbps[static_cast<size_t>(p.from)][static_cast<size_t>(p.to)] /= factor;
      c.held = held;
    }
  }
}

// Keeps only the directions between ring neighbours (what a ring workload's localisation probes).
void RingOnly(DoctorScan& s) {
  const int n = static_cast<int>(s.hosts.size());
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b && (a + 1) % n != b && (b + 1) % n != a)
        s.gbps[static_cast<size_t>(a)][static_cast<size_t>(b)] = std::nan("");
}

std::string Kinds(const DoctorScan& s, const DoctorVerdict& v) {
  std::string k;
  for (const auto& f : v.findings) {
    k += std::string(k.empty() ? "" : " ") + FindingName(f.kind);
    if (f.host >= 0) k += ":" + s.hosts[static_cast<size_t>(f.host)];
    if (!f.link.empty()) k += ":" + f.link + "(" + f.direction + ")";
    for (const auto& c : f.candidates) k += "|" + c;
  }
  return k.empty() ? "healthy" : k;
}

TEST(PathBlame, AHealthyFabricNamesNothing) {
  for (unsigned hash = 1; hash <= 4; ++hash) {
    for (Fabric f : {Fabric{2, 2, 4, hash}, Fabric{3, 2, 2, hash}, Fabric{2, 4, 4, hash}}) {
      for (unsigned seed = 1; seed <= 5; ++seed) {
        const DoctorScan s = Scan(f, seed);
        EXPECT_EQ(Kinds(s, Diagnose(s)), "healthy") << f.leaves << "x" << f.spines;
      }
    }
  }
}

// Three leaves: the transfers that crossed s1 -> l1 from l2 were healthy, so of the two links
// on the slow transfers' path only the uplink is left — named from the rates alone.
TEST(PathBlame, ASlowUplinkIsNamedWithItsDirectionAndNoHost) {
  Fabric f{3, 2, 2, 1};
  auto s = Scan(f);
  SlowLink(s, "l0", "s1", 4, 0);
  auto v = Diagnose(s);
  EXPECT_EQ(Kinds(s, v), "slow_uplink:l0-s1(l0 -> s1)") << v.findings[0].text;
  EXPECT_NE(v.findings[0].text.find("healthy transfer(s) left l0 by another link"),
            std::string::npos)
      << v.findings[0].text;
}

TEST(PathBlame, ASlowDownlinkIsNamedWithItsDirection) {
  Fabric f{3, 2, 2, 1};
  auto s = Scan(f);
  SlowLink(s, "s0", "l2", 4, 0);
  EXPECT_EQ(Kinds(s, Diagnose(s)), "slow_uplink:l2-s0(s0 -> l2)");
}

// Two leaves: every transfer up l0 -> s1 goes down s1 -> l1, so the rates cannot tell those two
// apart; the link end whose queue held them can.
TEST(PathBlame, OnTwoLeavesTheQueueThatHeldThemDecides) {
  Fabric f{2, 2, 4, 1};
  auto s = Scan(f);
  SlowLink(s, "l0", "s1", 4, 0);
  EXPECT_EQ(Kinds(s, Diagnose(s)),
            "slow_path|l0-s1 (l0 -> s1)|l1-s1 (s1 -> l1)");
  auto held = Scan(f);
  SlowLink(held, "l0", "s1", 4, 200000);
  EXPECT_EQ(Kinds(held, Diagnose(held)), "slow_uplink:l0-s1(l0 -> s1)");
  auto down = Scan(f);
  SlowLink(down, "s1", "l1", 4, 200000);
  EXPECT_EQ(Kinds(down, Diagnose(down)), "slow_uplink:l1-s1(s1 -> l1)");
}

TEST(PathBlame, BothDirectionsOfALinkAreOneFinding) {
  Fabric f{2, 2, 4, 2};
  auto s = Scan(f);
  SlowLink(s, "l0", "s1", 4, 150000);
  SlowLink(s, "s1", "l0", 4, 150000);
  auto v = Diagnose(s);
  EXPECT_EQ(Kinds(s, v), "slow_uplink:l0-s1(both ways)");
}

// Measured on leafspine:2x2x3 (a run's localisation of a direct all-to-all, l0-s1 at a quarter
// both ways): 8 of the 9 pairs across the leaves hashed onto s1, so most cross-leaf transfers
// were slow and the median transfer with them; the link whose queues held them is still named.
TEST(PathBlame, ALinkMostPairsHashedOntoIsNamedBothWays) {
  Fabric f{2, 2, 3, 0};
  auto s = Scan(f);
  for (auto& p : s.paths) {
    if (p.crossings.empty()) continue;
    const bool s0 = (p.from == 2 && p.to == 4) || (p.from == 4 && p.to == 2);
    for (auto& c : p.crossings) {
      const std::string sp = s0 ? "s0" : "s1";
      if (c.from.front() == 's') c.from = sp;
      if (c.to.front() == 's') c.to = sp;
      c.link = c.link.substr(0, 3) + sp;
    }
  }
  SlowLink(s, "l0", "s1", 4, 110000);
  SlowLink(s, "s1", "l0", 4, 110000);
  EXPECT_EQ(Kinds(s, Diagnose(s)), "slow_uplink:l0-s1(both ways)");
}

// A slow NIC is still its host's: its transfers across the fabric went over both spines, and
// healthy transfers of others cleared every switch link.
TEST(PathBlame, ASlowHostNicStillNamesTheHostAndItsSide) {
  for (Fabric f : {Fabric{2, 2, 4, 1}, Fabric{3, 2, 2, 3}}) {
    auto s = Scan(f);
    for (size_t p = 0; p < s.hosts.size(); ++p)
      if (p != 1) s.gbps[1][p] /= 3;
    EXPECT_EQ(Kinds(s, Diagnose(s)), "slow_transmit:h1");
    auto r = Scan(f);
    for (size_t p = 0; p < r.hosts.size(); ++p)
      if (p != 2) r.gbps[p][2] /= 3;
    EXPECT_EQ(Kinds(r, Diagnose(r)), "slow_receive:h2");
  }
}

// A ring's localisation on 2x2x4 probes h3 <-> h4 and h7 <-> h0 across the fabric. With l0 -> s1
// slow, only h3 -> h4 crossed it: h3's other transfer and h4's were healthy, so neither host is
// blamed, but the uplink and the downlink it went on cannot be told apart without the shapers.
TEST(PathBlame, OnePairAcrossALinkIsSaidToBeAmbiguous) {
  Fabric f{2, 2, 4, 1, 1};
  ASSERT_EQ(f.Spine(3, 4), 1);
  ASSERT_EQ(f.Spine(0, 7), 0);
  auto s = Scan(f);
  RingOnly(s);
  SlowLink(s, "l0", "s1", 4, 0);
  EXPECT_EQ(Kinds(s, Diagnose(s)), "slow_path|l0-s1 (l0 -> s1)|l1-s1 (s1 -> l1)");
  // h3 measured with h4 alone (its other neighbour gone): h3's transmit side is a candidate too.
  s.gbps[3][2] = s.gbps[2][3] = std::nan("");
  EXPECT_EQ(Kinds(s, Diagnose(s)),
            "slow_path|l0-s1 (l0 -> s1)|l1-s1 (s1 -> l1)|h3's transmit side");
  // With the uplink's shaper holding the packets, the uplink is named.
  auto held = Scan(f);
  RingOnly(held);
  SlowLink(held, "l0", "s1", 4, 60000);
  EXPECT_EQ(Kinds(held, Diagnose(held)), "slow_uplink:l0-s1(l0 -> s1)");
}

// Without paths (a cluster, not a testbed) the same scan is judged as before: slow pairs.
TEST(PathBlame, WithoutPathsSlowTransfersStayPairs) {
  Fabric f{3, 2, 2, 1};
  auto s = Scan(f);
  SlowLink(s, "l0", "s1", 4, 0);
  s.paths.clear();
  const std::string k = Kinds(s, Diagnose(s));
  EXPECT_EQ(k.rfind("slow_pair", 0), 0u) << k;
  EXPECT_EQ(k.find("uplink"), std::string::npos) << k;
}

}  // namespace
}  // namespace genie::report
