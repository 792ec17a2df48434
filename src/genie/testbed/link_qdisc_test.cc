// A link end's qdisc from tc's JSON as this machine's tc prints it (captured from veths shaped
// as `genie testbed up` shapes them).
#include "genie/testbed/link_qdisc.h"

#include <gtest/gtest.h>

#include "genie/testbed/counters.h"

namespace genie::testbed {
namespace {

// `tc -s -j qdisc show` (no -raw) after `tc qdisc add dev d0 root tbf rate 1gbit burst 131072
// limit 2000000`: the limit comes as a latency.
constexpr const char* kTbf =
    R"([{"kind":"noqueue","handle":"0:","dev":"d1","root":true,"refcnt":2,"options":{}},
        {"kind":"tbf","handle":"9a9e:","dev":"d0","root":true,"refcnt":3,
         "options":{"rate":125000000,"burst":131000,"lat":14952},"bytes":0,"drops":0}])";
// The same with -raw.
constexpr const char* kTbfRaw =
    R"([{"kind":"tbf","handle":"9a9e:","dev":"d0","root":true,"refcnt":3,
         "options":{"rate":125000000,"burst":131000,"burst_raw":"4000","lat":14952,
                    "limit":2000000}}])";
// A per-host leaf-spine link end: an htb root and one bfifo per class (two classes here).
constexpr const char* kHtb =
    R"([{"kind":"htb","handle":"1:","dev":"s0","root":true,"options":{"r2q":10,"default":"0x2"}},
        {"kind":"bfifo","handle":"2:","dev":"s0","parent":"1:2","options":{"limit":512000}},
        {"kind":"bfifo","handle":"100:","dev":"s0","parent":"1:100","options":{"limit":512000}},
        {"kind":"tbf","handle":"5:","dev":"eth0","root":true,
         "options":{"rate":50000000,"burst":131072,"limit":2000000}}])";

TEST(LinkQdisc, ATbfsRateBurstAndLimit) {
  const LinkQdisc raw = QdiscFromTcJson(nlohmann::json::parse(kTbfRaw), "d0");
  EXPECT_EQ(raw.kind, "tbf");
  EXPECT_EQ(raw.rate_bps, 1'000'000'000u);
  EXPECT_EQ(raw.burst_bytes, 131000u);
  EXPECT_EQ(raw.limit_bytes, 2'000'000u);
  EXPECT_EQ(raw.queues, 1);
  // Without -raw the limit is recovered from tc's latency to within a microsecond's bytes.
  const LinkQdisc lat = QdiscFromTcJson(nlohmann::json::parse(kTbf), "d0");
  EXPECT_NEAR(static_cast<double>(lat.limit_bytes), 2e6, 125);
  EXPECT_EQ(LinkQdisc::FromJson(raw.ToJson()).ToJson(), raw.ToJson());
}

TEST(LinkQdisc, AnHtbRootCountsItsLeafFifos) {
  const auto j = nlohmann::json::parse(kHtb);
  const LinkQdisc q = QdiscFromTcJson(j, "s0");
  EXPECT_EQ(q.kind, "htb");
  EXPECT_EQ(q.limit_bytes, 512000u);
  EXPECT_EQ(q.queues, 2);
  EXPECT_EQ(q.rate_bps, 0u);  // in its classes, which the qdisc listing does not show
  EXPECT_EQ(QdiscFromTcJson(j, "eth0").rate_bps, 400'000'000u);
}

// A host's NIC that sends its ACKs first (`tc -raw -s -j qdisc show dev eth0` after `genie
// testbed up --rate 200mbit`): the tbf holds the rate, its htb orders, the bfifos hold the queue.
constexpr const char* kAckFirst =
    R"([{"kind":"tbf","handle":"1:","dev":"eth0","root":true,"refcnt":3,
         "options":{"rate":25000000,"burst":131050,"lat":74800,"limit":2000000}},
        {"kind":"htb","handle":"2:","dev":"eth0","parent":"1:1","options":{"r2q":10,"default":"0x20"}},
        {"kind":"bfifo","handle":"10:","dev":"eth0","parent":"2:10","options":{"limit":1000000}},
        {"kind":"bfifo","handle":"20:","dev":"eth0","parent":"2:20","options":{"limit":1000000}}])";

TEST(LinkQdisc, ATbfHoldingAnOrderingHtbCountsItsFifos) {
  const LinkQdisc q = QdiscFromTcJson(nlohmann::json::parse(kAckFirst), "eth0");
  EXPECT_EQ(q.kind, "tbf");
  EXPECT_EQ(q.rate_bps, 200'000'000u);
  EXPECT_EQ(q.limit_bytes, 1'000'000u);  // the FIFOs', where packets wait (after a queue fault)
  EXPECT_EQ(q.queues, 2);
}

TEST(LinkQdisc, AnInterfaceWithoutAQdiscOrNotTcsJsonGivesNothing) {
  EXPECT_EQ(QdiscFromTcJson(nlohmann::json::parse(kTbf), "eth9").kind, "");
  EXPECT_EQ(QdiscFromTcJson(nlohmann::json("not tc"), "d0").kind, "");
  EXPECT_EQ(QdiscFromTcJson(nlohmann::json::parse(kTbf), "d1").kind, "noqueue");
}

// The counters' one `tc -raw` listing per namespace gives every link end's qdisc as well.
class ListingShell : public Shell {
 public:
  CommandResult Run(const Argv& argv) override {
    commands.push_back(argv);
    const std::string cmd = ToString(argv);
    if (cmd.find(" link show") != std::string::npos) {
      return {0,
              R"([{"ifname":"eth0","stats64":{"rx":{"bytes":1},"tx":{"bytes":2}}},)"
              R"({"ifname":"h0n0"},{"ifname":"h1n0"}])",
              ""};
    }
    if (cmd.find("qdisc show") != std::string::npos) {
      return {0,
              R"([{"kind":"tbf","handle":"1:","dev":"eth0","root":true,)"
              R"("options":{"rate":50000000,"burst":131072,"limit":2000000}},)"
              R"({"kind":"tbf","handle":"1:","dev":"h0n0","root":true,)"
              R"("options":{"rate":50000000,"burst":131072,"limit":512000}},)"
              R"({"kind":"tbf","handle":"1:","dev":"h1n0","root":true,)"
              R"("options":{"rate":50000000,"burst":131072,"limit":512000}}])",
              ""};
    }
    return {0, R"({"kernel":{}})", ""};  // nstat
  }
  std::vector<Argv> commands;
};

TEST(LinkQdisc, TheCountersReadEveryLinkEndsQdiscFromTheirTcListing) {
  TestbedSpec spec;
  spec.name = "lq";
  ASSERT_TRUE(ParseTopology("star:2", &spec).ok());
  auto layout = LayOut(spec);
  ASSERT_TRUE(layout.ok());
  ListingShell shell;
  auto counters = ReadCounters(*layout, shell);
  ASSERT_TRUE(counters.ok()) << counters.status().message();
  bool raw = false;
  for (const auto& a : shell.commands)
    raw |= ToString(a).find("tc -n") == 0 && ToString(a).find("-raw") != std::string::npos;
  EXPECT_TRUE(raw) << "tbf's limit in bytes, not as a latency";
  const nlohmann::json q = counters->QdiscsJson();
  ASSERT_FALSE(q.empty());
  bool host_end = false, switch_end = false;
  for (const auto& e : q) {
    if (e["node"] == "h0" && e["ifname"] == "eth0") {
      host_end = true;
      EXPECT_EQ(e["limit_bytes"], 2'000'000u);
      EXPECT_EQ(e["rate_bps"], 400'000'000u);
      EXPECT_EQ(e["link"], "h0");
    }
    if (e["node"] == "sw" && e["ifname"] == "h0n0") {
      switch_end = true;
      EXPECT_EQ(e["limit_bytes"], 512'000u);
    }
  }
  EXPECT_TRUE(host_end && switch_end) << q.dump();
}

}  // namespace
}  // namespace genie::testbed
