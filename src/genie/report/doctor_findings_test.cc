#include "genie/report/doctor_findings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace genie::report {
namespace {

// A healthy star of n hosts: 0.05 GB/s and 100 µs everywhere, +-5 % noise, no loss.
DoctorScan Healthy(int n, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(0.95, 1.05);
  DoctorScan s;
  for (int h = 0; h < n; ++h) s.hosts.push_back("h" + std::to_string(h));
  const auto N = static_cast<size_t>(n);
  s.gbps.assign(N, std::vector<double>(N, std::nan("")));
  s.rtt_us = s.retrans = s.gbps;
  for (size_t a = 0; a < N; ++a) {
    for (size_t b = 0; b < N; ++b) {
      if (a == b) continue;
      s.gbps[a][b] = 0.05 * noise(rng);
      s.retrans[a][b] = 0;
      s.rtt_us[a][b] = s.rtt_us[b][a] = b < a ? s.rtt_us[b][a] : 100 * noise(rng);
    }
  }
  for (size_t h = 0; h < N; ++h) {
    s.ring_gbps.push_back(0.05 * noise(rng));
    s.alltoall_gbps.push_back(0.045 * noise(rng));
  }
  s.incast_gbps = 0.049;
  return s;
}

std::string Kinds(const DoctorVerdict& v) {
  std::string k;
  for (const auto& f : v.findings) {
    k += std::string(k.empty() ? "" : " ") + FindingName(f.kind) + ":" + std::to_string(f.host);
    if (f.peer >= 0) k += ">" + std::to_string(f.peer);
  }
  return k;
}

TEST(DoctorFindings, AHealthyFabricHasNoFinding) {
  for (int n : {2, 3, 4, 8, 16}) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
      auto v = Diagnose(Healthy(n, seed));
      EXPECT_TRUE(v.healthy()) << n << " hosts, seed " << seed << ": " << Kinds(v);
    }
  }
}

TEST(DoctorFindings, ASlowTransmitSideNamesThatHostAndSideOnly) {
  for (int n : {3, 4, 8, 16}) {
    auto s = Healthy(n);
    for (int p = 0; p < n; ++p)
      if (p != 2) s.gbps[2][static_cast<size_t>(p)] /= 3;
    s.ring_gbps[3] /= 3;  // the ring hop out of h2 is slow too: explained, not named again
    s.alltoall_gbps[1] /= 3;  // and whoever waited for it in the all-to-all
    auto v = Diagnose(s);
    EXPECT_EQ(Kinds(v), "slow_transmit:2") << n;
  }
}

TEST(DoctorFindings, ASlowReceiveSideNamesThatHostAndSideOnly) {
  auto s = Healthy(8);
  for (size_t p = 0; p < 8; ++p)
    if (p != 5) s.gbps[p][5] /= 3;
  s.alltoall_gbps[5] /= 3;
  EXPECT_EQ(Kinds(Diagnose(s)), "slow_receive:5");
}

TEST(DoctorFindings, BothSidesSlowIsTheHostsLink) {
  auto s = Healthy(8);
  for (size_t p = 0; p < 8; ++p) {
    if (p == 6) continue;
    s.gbps[p][6] /= 10;
    s.gbps[6][p] /= 10;
  }
  EXPECT_EQ(Kinds(Diagnose(s)), "slow_link:6");
}

TEST(DoctorFindings, OneSlowDirectionBetweenTwoHostsIsAPair) {
  auto s = Healthy(8);
  s.gbps[1][4] /= 4;
  EXPECT_EQ(Kinds(Diagnose(s)), "slow_pair:1>4");
  // With two hosts a direction cannot be pinned on either host.
  auto two = Healthy(2);
  two.gbps[0][1] /= 4;
  EXPECT_EQ(Kinds(Diagnose(two)), "slow_pair:0>1");
}

TEST(DoctorFindings, LossOnALinkNamesThatLinkAndItsSide) {
  auto s = Healthy(8);
  for (size_t p = 0; p < 8; ++p) {
    if (p == 3) continue;
    s.retrans[p][3] = 0.02;  // what its peers send it is dropped
    s.gbps[p][3] /= 2;
  }
  s.retrans[3][0] = 0.01;  // an ACK lost now and then shows on the other side once
  auto v = Diagnose(s);
  EXPECT_EQ(Kinds(v), "slow_receive:3 lossy_link:3");
  EXPECT_NE(v.findings[1].text.find("receive side"), std::string::npos) << v.findings[1].text;
}

TEST(DoctorFindings, ADelayedLinkIsSlowToAnswer) {
  auto s = Healthy(8);
  for (size_t p = 0; p < 8; ++p) {
    if (p == 6) continue;
    s.rtt_us[p][6] = s.rtt_us[6][p] = 20'100;
  }
  EXPECT_EQ(Kinds(Diagnose(s)), "high_latency:6");
  // Scheduler noise of a few hundred µs on a loaded machine is not a fault.
  auto noisy = Healthy(8);
  noisy.rtt_us[1][2] = noisy.rtt_us[2][1] = 450;
  EXPECT_TRUE(Diagnose(noisy).healthy()) << Kinds(Diagnose(noisy));
}

TEST(DoctorFindings, AnExpectationTheWholeFabricMissesIsNamedOnce) {
  auto s = Healthy(8);
  s.expected_gbps = 0.1;
  s.expected_source = "--expect 1gbit";
  auto v = Diagnose(s);
  EXPECT_EQ(Kinds(v), "fabric_slow:-1");
  s.expected_gbps = 0.055;
  EXPECT_TRUE(Diagnose(s).healthy());
}

TEST(DoctorFindings, IncastAndAllToAllBelowTheirPeersAreNamed) {
  auto s = Healthy(8);
  s.incast_gbps = 0.02;
  s.alltoall_gbps[4] = 0.01;
  EXPECT_EQ(Kinds(Diagnose(s)), "incast:0 slow_all_to_all:4");
  // On a fabric with uplinks the uneven paths are suspected; on one switch there are none.
  EXPECT_NE(Diagnose(s).findings.back().text.find("ECMP"), std::string::npos);
  s.one_switch = true;
  const std::string star = Diagnose(s).findings.back().text;
  EXPECT_EQ(star.find("ECMP"), std::string::npos) << star;
  EXPECT_NE(star.find("no shared path: its receive side or the CPU"), std::string::npos) << star;
}

TEST(DoctorFindings, ReportAndJsonNameWhatWasFound) {
  auto s = Healthy(4);
  for (size_t p = 0; p < 4; ++p)
    if (p != 1) s.gbps[1][p] /= 3;
  auto v = Diagnose(s);
  std::string text = FormatDoctorReport(s, v);
  EXPECT_NE(text.find("h1: transmit side slow"), std::string::npos) << text;
  EXPECT_NE(text.find("slow_transmit"), std::string::npos) << text;
  auto j = DoctorJson(s, v);
  EXPECT_FALSE(j["healthy"].get<bool>());
  EXPECT_EQ(j["findings"][0]["host"], "h1");
  EXPECT_EQ(j["findings"][0]["kind"], "slow_transmit");
  EXPECT_TRUE(j["pairwise"]["gbps"][0][0].is_null());
  EXPECT_NE(FormatDoctorReport(Healthy(4), Diagnose(Healthy(4))).find("# healthy"),
            std::string::npos);
}

// h0's sending while the others send into it, over what it sends h1 alone: a figure beside
// the incast's, and below 0.6 on a fabric without findings a note (bounded windows through the
// queue toward h0), never a finding.
TEST(DoctorFindings, SendingUnderIncastIsReportedAndANoteBelowItsShare) {
  auto s = Healthy(8);
  const double alone = s.gbps[0][1];
  s.incast_send_gbps = 0.4 * alone;
  auto v = Diagnose(s);
  EXPECT_TRUE(v.healthy()) << Kinds(v);
  EXPECT_NEAR(IncastSendShare(s, v.reference_gbps), 0.4, 1e-12);
  const std::string note = IncastSendNote(s, v);
  EXPECT_NE(note.find("h0 sent"), std::string::npos) << note;
  EXPECT_NE(note.find("to h1 while 6 host(s) sent into it, 0.40 of what it sends h1 alone"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("queue toward h0"), std::string::npos) << note;
  const std::string text = FormatDoctorReport(s, v);
  EXPECT_NE(text.find("h0 sending meanwhile: "), std::string::npos) << text;
  EXPECT_NE(text.find("all-to-all, sending under incast;"), std::string::npos) << text;
  EXPECT_NE(text.find("# note: h0 sent"), std::string::npos) << text;
  EXPECT_NE(text.find("# healthy"), std::string::npos) << text;
  const auto j = DoctorJson(s, v);
  EXPECT_NEAR(j["incast_send_gbps"].get<double>(), 0.4 * alone, 1e-12);
  EXPECT_NEAR(j["incast_send_share"].get<double>(), 0.4, 1e-12);
  EXPECT_EQ(j["incast_send_note"], note);
  // Without the pair's own figure, the median pair is the yardstick.
  auto no_pair = s;
  no_pair.gbps[0][1] = std::nan("");
  EXPECT_NEAR(IncastSendShare(no_pair, 0.05), 0.4 * alone / 0.05, 1e-12);
  // At or above the share: no note.
  s.incast_send_gbps = kIncastSendShare * alone;
  EXPECT_EQ(IncastSendNote(s, Diagnose(s)), "");
  EXPECT_FALSE(DoctorJson(s, Diagnose(s)).contains("incast_send_note"));
  // A slow transmit side of h0 reads the same: its finding, and no note beside it.
  auto slow = Healthy(8);
  for (size_t p = 1; p < 8; ++p) slow.gbps[0][p] /= 3;
  slow.incast_send_gbps = 0.1 * alone;
  auto sv = Diagnose(slow);
  EXPECT_FALSE(sv.healthy());
  EXPECT_EQ(IncastSendNote(slow, sv), "");
  // Not measured (two hosts, or 0), or on loopback: nothing.
  s.incast_send_gbps = 0;
  EXPECT_EQ(IncastSendShare(s, 0.05), -1);
  EXPECT_FALSE(DoctorJson(s, v).contains("incast_send_gbps"));
  EXPECT_FALSE(DoctorJson(s, v).contains("incast_send_share"));
  EXPECT_EQ(FormatDoctorReport(s, v).find("sending meanwhile"), std::string::npos);
  auto two = Healthy(2);
  two.incast_send_gbps = 0.001;
  EXPECT_EQ(IncastSendShare(two, 0.05), -1);
  s.incast_send_gbps = 0.1 * alone;
  s.loopback = true;
  EXPECT_EQ(IncastSendNote(s, v), "");
}

}  // namespace
}  // namespace genie::report
