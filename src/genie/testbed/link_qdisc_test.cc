// A link end's qdisc from tc's JSON as this machine's tc prints it (captured from veths shaped
// as `genie testbed up` shapes them).
#include "genie/testbed/link_qdisc.h"

#include <gtest/gtest.h>

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

TEST(LinkQdisc, AnInterfaceWithoutAQdiscOrNotTcsJsonGivesNothing) {
  EXPECT_EQ(QdiscFromTcJson(nlohmann::json::parse(kTbf), "eth9").kind, "");
  EXPECT_EQ(QdiscFromTcJson(nlohmann::json("not tc"), "d0").kind, "");
  EXPECT_EQ(QdiscFromTcJson(nlohmann::json::parse(kTbf), "d1").kind, "noqueue");
}

}  // namespace
}  // namespace genie::testbed
