// A run's network settings from its provenance: per host from the ranks' headers (and from an
// older run's sysctls), the links' qdiscs from the testbed record, the summary, and the
// differences between two summaries.
#include "genie/report/network_settings.h"

#include <gtest/gtest.h>

namespace genie::report {
namespace {

using json = nlohmann::json;

json Header(int rank, const std::string& host, const std::string& cc, const std::string& source) {
  return {{"rank", rank},
          {"host_settings",
           {{"host", host},
            {"tcp_congestion", cc},
            {"tcp_congestion_source", source},
            {"tcp_congestion_default", "bbr"},
            {"tcp_ecn", "2"}}}};
}

json Link(const std::string& link, const std::string& node, const std::string& qdisc, uint64_t rate,
          uint64_t limit) {
  return {{"link", link},     {"node", node},          {"ifname", "eth0"},     {"qdisc", qdisc},
          {"rate_bps", rate}, {"burst_bytes", 131072}, {"limit_bytes", limit}, {"queues", 1}};
}

json Provenance(const std::string& cc, uint64_t spine_limit) {
  json p = {{"headers", json::array({Header(0, "h0", cc, "socket option"),
                                     Header(1, "h1", cc, "socket option"),
                                     Header(2, "h0", cc, "socket option")})},
            {"testbed",
             {{"name", "t"},
              {"links", json::array({Link("h0", "h0", "tbf", 1'000'000'000, 2'000'000),
                                     Link("h0", "l0", "tbf", 1'000'000'000, 2'000'000),
                                     Link("l0-s0", "l0", "htb", 500'000'000, spine_limit)})}}}};
  return p;
}

TEST(NetworkSettings, GathersHostsFromTheRankHeadersAndLinksFromTheTestbed) {
  const json ns = NetworkSettingsFromProvenance(Provenance("cubic", 2'000'000));
  ASSERT_TRUE(ns.is_object());
  ASSERT_EQ(ns["hosts"].size(), 2u);  // ranks 0 and 2 share h0
  EXPECT_EQ(ns["hosts"][0]["ranks"], json::array({0, 2}));
  EXPECT_EQ(ns["links"].size(), 3u);
  const SettingsSummary s = SummaryOf(ns);
  EXPECT_EQ(s.at("tcp_congestion"), "cubic");
  EXPECT_EQ(s.at("tcp_ecn"), "2");
  EXPECT_EQ(s.at("host_nics"), "tbf, 1gbit, queue 2000000 B");
  EXPECT_EQ(s.at("host_links"), "tbf, 1gbit, queue 2000000 B");
  EXPECT_EQ(s.at("switch_links"), "htb (a FIFO per sending host), 500mbit, queue 2000000 B each");
  const std::string text = FormatNetworkSettings(ns);
  EXPECT_NE(text.find("tcp_congestion  cubic"), std::string::npos) << text;
  EXPECT_NE(text.find("--tcp-congestion on 2 host(s), over their default bbr"), std::string::npos)
      << text;
}

// A host's NIC sending its ACKs first is said so; its two FIFOs each hold the queue.
TEST(NetworkSettings, AHostSendingItsAcksFirstIsNamedSo) {
  json p = Provenance("bbr", 2'000'000);
  json& host_end = p["testbed"]["links"][0];
  host_end["scheduling"] = "ack-first";
  host_end["queues"] = 2;
  p["testbed"]["links"][1]["scheduling"] = "fifo";
  const SettingsSummary s = SummaryOf(NetworkSettingsFromProvenance(p));
  EXPECT_EQ(s.at("host_nics"), "tbf, small TCP packets (ACKs) first, 1gbit, queue 2000000 B each");
  EXPECT_EQ(s.at("host_links"), "tbf, 1gbit, queue 2000000 B");  // the switch's port toward h0
}

TEST(NetworkSettings, HostsThatDisagreeAreNamedPerValue) {
  json p = Provenance("bbr", 2'000'000);
  p["headers"][1] = Header(1, "h1", "cubic", "host default");
  EXPECT_EQ(SummaryOf(NetworkSettingsFromProvenance(p)).at("tcp_congestion"),
            "bbr (h0); cubic (h1)");
}

TEST(NetworkSettings, AnOlderRunsSysctlsAndSocketOptionStandIn) {
  const json p = {
      {"headers",
       json::array(
           {{{"rank", 0},
             {"hostname", "m"},
             {"transport", {{"tcp_congestion", ""}}},
             {"sysctls", {{"net.ipv4.tcp_congestion_control", "bbr"}, {"net.ipv4.tcp_ecn", "2"}}}},
            {{"rank", 1},
             {"hostname", "m"},
             {"transport", {{"tcp_congestion", "cubic"}}},
             {"sysctls", {{"net.ipv4.tcp_congestion_control", "bbr"}}}}})}};
  const json ns = NetworkSettingsFromProvenance(p);
  ASSERT_EQ(ns["hosts"].size(), 1u);  // one machine: the first rank's reading
  EXPECT_EQ(ns["hosts"][0].value("tcp_congestion", ""), "bbr");
  EXPECT_EQ(ns["hosts"][0].value("tcp_congestion_source", ""), "host default");
  EXPECT_TRUE(NetworkSettingsFromProvenance(json::object()).is_null());  // a simulation
  EXPECT_TRUE(SummaryOf(json()).empty());
}

TEST(NetworkSettings, DifferencesNameEachSettingAndBothValues) {
  const SettingsSummary a = SummaryOf(NetworkSettingsFromProvenance(Provenance("bbr", 2'000'000)));
  const SettingsSummary b = SummaryOf(NetworkSettingsFromProvenance(Provenance("cubic", 512'000)));
  const auto d = SettingDifferences(a, b);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].name, "switch_links");
  EXPECT_EQ(d[1].name, "tcp_congestion");
  EXPECT_EQ(d[1].a, "bbr");
  EXPECT_EQ(d[1].b, "cubic");
  EXPECT_TRUE(SettingDifferences(a, a).empty());
  EXPECT_EQ(DescribeDifferences({d[1]}, "calibrated with", "run with"),
            "calibrated with tcp_congestion bbr, run with cubic");
  SettingsSummary partial = a;
  partial.erase("tcp_ecn");
  EXPECT_EQ(DescribeDifferences(SettingDifferences(partial, a), "calibrated with", "run with"),
            "calibrated with tcp_ecn not recorded, run with 2");
}

}  // namespace
}  // namespace genie::report

namespace genie::report {
namespace {

TEST(NetworkSettings, ACalibrationUnderOtherSettingsIsSaidWithTheCommandThatFixesIt) {
  const SettingsSummary bbr = {{"tcp_congestion", "bbr"}, {"tcp_ecn", "2"}};
  const SettingsSummary cubic = {{"tcp_congestion", "cubic"}, {"tcp_ecn", "2"}};
  EXPECT_EQ(CalibrationNote("t", bbr, bbr, "2026-12-06T11:00:00Z", true, 1), "");
  const std::string note = CalibrationNote("t", bbr, cubic, "2026-12-06T11:00:00Z", false, 1);
  EXPECT_EQ(note.rfind("calibrated with tcp_congestion bbr, run with cubic: the prediction's "
                       "shares",
                       0),
            0u)
      << note;
  EXPECT_NE(note.find("`genie testbed calibrate t --tcp-congestion cubic`"), std::string::npos)
      << note;
  const std::string old = CalibrationNote("t", {}, cubic, "2026-12-01T00:00:00Z", false, 1);
  EXPECT_NE(old.find("predates"), std::string::npos) << old;
  EXPECT_NE(old.find("tcp_congestion cubic"), std::string::npos) << old;
}

}  // namespace
}  // namespace genie::report
