// A slow switch-to-switch link named as that link, as root on leafspine:2x2x3 at 400 Mbit/s with
// the default ECMP hash (addresses and ports: which spine a pair takes is not known in advance).
// l0-s1 slowed to a quarter in one direction — up (l0 -> s1), then down (s1 -> l0) — is named
// with that direction by `genie doctor` and by `genie run --localize` (a direct all-to-all, so
// every pair is probed), and no host is blamed; slowed both ways, the run names it once, "both
// ways". Pairs the doctor measures at once collide on the uplinks (two flows hashed onto
// one spine); it measures those again alone, so only the link slow by itself is named. With 9
// directions from each leaf to the other, a spine none of them hashed onto is 1 chance in 512. Skips without root; the testbed is taken
// down also when a check fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/skip.h"
#include "tests/support/suite_testbed.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using nlohmann::json;

class SpineLocalize : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    testbed_.Up("spn" + std::to_string(getpid() % 100000),
                "--topology leafspine:2x2x3 --rate 400mbit");
  }
  static void TearDownTestSuite() { testbed_.Down(); }
  void SetUp() override {
    GENIE_SKIP_IF(RootMissing("build a leaf-spine testbed (network namespaces)"));
    ASSERT_TRUE(testbed_.up()) << "testbed up failed: " << testbed_.up_error();
    name_ = testbed_.name();
    dir_ = FreshDir("spine-" + name_);
  }
  void TearDown() override { testbed_.ClearFaults(); }
  void Slow(const std::string& direction) {
    testbed_.ClearFaults();
    testbed_.Fault("l0-s1 --rate 100mbit --direction " + direction);
  }
  // Every finding as "kind:host:link(direction)".
  static std::string Findings(const json& j) {
    std::string s;
    for (const auto& f : j["findings"]) {
      s += (s.empty() ? "" : " ") + f["kind"].get<std::string>() + ":" +
           f.value("host", std::string("-")) + ":" + f.value("link", std::string("-")) + "(" +
           f.value("direction", std::string("-")) + ")";
    }
    return s.empty() ? "healthy" : s;
  }

  static SuiteTestbed testbed_;
  std::string name_, dir_;
};
SuiteTestbed SpineLocalize::testbed_;

struct Case {
  std::string direction, named;
};
const Case kCases[] = {{"out", "slow_uplink:-:l0-s1(l0 -> s1)"},
                       {"in", "slow_uplink:-:l0-s1(s1 -> l0)"}};

TEST_F(SpineLocalize, TheDoctorNamesTheLinkAndItsDirection) {
  for (const Case& c : kCases) {
    Slow(c.direction);
    const std::string out = dir_ + "/doctor-" + c.direction + ".json";
    // 2 MiB per direction, not the default 16: a quarter of the rate shows as clearly (42 ms
    // against 168 ms a pair), and a scan takes 4 s instead of 10-34 s (more when pairs
    // measured at once collide on an uplink and are measured again alone).
    CliResult r = RunCli(
        Genie("launch --testbed " + name_ + " -n 6 -- doctor --bytes 2MiB --json " + out));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    json j = json::parse(ReadFile(out), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    EXPECT_EQ(Findings(j), c.named) << r.output;
  }
}

TEST_F(SpineLocalize, ARunsLocalisationNamesTheLinkAndItsDirection) {
  CliResult gen = RunCli(Genie("gen collective --type all_to_all --size 3MiB -n 6 -o " + dir_ +
                               "/a2a"));
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  // A direct all-to-all (every rank to every other), so that every pair is used and probed.
  std::ofstream(dir_ + "/direct.json") << R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
    "active-chunks-per-dimension": 1, "preferred-dataset-splits": 1,
    "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["direct"],
    "collective-optimization": "baseline", "local-mem-bw": 50, "boost-mode": 0})";
  std::vector<Case> cases(std::begin(kCases), std::end(kCases));
  cases.push_back({"both", "slow_uplink:-:l0-s1(both ways)"});
  for (const Case& c : cases) {
    Slow(c.direction);
    const std::string out = dir_ + "/run-" + c.direction;
    CliResult r = RunCli(Genie("launch --testbed " + name_ + " -n 6 -- run " + dir_ +
                               "/a2a -n 2 --warmup 0 --system " + dir_ +
                               "/direct.json --localize -o " + out));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    json j = json::parse(ReadFile(out + "/results.json"), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    ASSERT_TRUE(j.contains("localization")) << r.output;
    EXPECT_EQ(Findings(j["localization"]), c.named) << r.output;
    EXPECT_TRUE(j["localization"].contains("paths")) << r.output;
  }
}

}  // namespace
}  // namespace genie::testing
