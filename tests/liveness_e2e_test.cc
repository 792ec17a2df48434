// Liveness and the network's failures, end to end: a healthy run whose one message lasts many
// times --peer-timeout on a slow link completes (progress is bytes moving, not messages ending);
// a link that is down before the run starts, and a --bind address this host lacks, fail naming
// the real cause with the documented exit code (docs/cli.md), not "look for the cause in the
// other nodes' output". The testbed cases need root (network namespaces) and skip without it.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using nlohmann::json;

// A 2-rank all-reduce workload of `size` (e.g. "128MiB") in `dir`/w.
std::string Workload(const std::string& dir, const std::string& size) {
  const std::string w = dir + "/w";
  CliResult g = RunCli(Genie("gen collective --type all_reduce --size " + size + " --ranks 2 -o " + w));
  EXPECT_EQ(g.exit_code, 0) << g.output;
  return w;
}

// A star:2 testbed of its own (lv<pid>), taken down after the test.
class ShapedLink : public ::testing::Test {
 protected:
  void SetUp() override {
    GENIE_SKIP_IF(NamespacesMissing());
    // A killed earlier run of these tests could not take its testbed down: do it now.
    CliResult old = RunCli("ip netns list 2>/dev/null | grep -o '^lv[0-9]*-' | sort -u | tr -d -");
    std::istringstream names(old.output);
    for (std::string n; names >> n;) {
      if (kill(std::stoi(n.substr(2)), 0) != 0) RunCli(Genie("testbed down " + n) + " >/dev/null 2>&1");
    }
    name_ = "lv" + std::to_string(getpid());
    dir_ = FreshDir("liveness-" + name_);
  }
  void TearDown() override {
    if (name_.empty()) return;
    RunCli(Genie("testbed down " + name_) + " 2>/dev/null");
    EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output,
              "0\n");
  }
  void Up(const std::string& args) {
    CliResult r = RunCli(Genie("testbed up --name " + name_ + " --topology star:2 " + args));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  CliResult Launch(const std::string& w, const std::string& run_args) {
    return RunCli(Genie("launch --testbed " + name_ + " -n 2 -- run " + w + " -o " + dir_ +
                        "/out " + run_args));
  }
  std::string name_, dir_;
};

// 64 MiB all-reduced by 2 ranks: two 32 MiB messages in turn, each about 2.8 s at 100 Mbit/s,
// with --peer-timeout 500ms (the watchdog's limit: 1 s; each message 5.6x the timeout, as over
// libfabric below). Before the transports counted a message's bytes as they moved, the watchdog
// saw nothing move until the message ended and stopped this healthy run after about 1.5 s ("no
// progress for ..."; with 128 MiB and 1 s, after about 3 s).
TEST_F(ShapedLink, AMessageLastingFiveTimesThePeerTimeoutCompletes) {
  Up("--rate 100mbit");
  const std::string w = Workload(dir_, "64MiB");
  CliResult r = Launch(w, "--iterations 1 --peer-timeout 500ms");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("no progress"), std::string::npos) << r.output;
  const json results = json::parse(ReadFile(dir_ + "/out/results.json"));
  ASSERT_FALSE(results["collectives"].empty());
  for (const auto& c : results["collectives"]) {
    // Two messages back to back, each at least 5x the peer timeout.
    EXPECT_GE(c["duration_ns"].get<double>(), 2 * 5 * 0.5e9) << c.dump();
  }
}

// The same over libfabric (tcp;ofi_rxm): two 32 MiB messages, each about
// 2.8 s at 100 Mbit/s, with --peer-timeout 500ms (each message 5.6x it). A payload that moved as
// one provider operation was heard of only when it landed, and a heartbeat queued behind it:
// this run ended with "has not been heard from" after about 1.5 s. Payloads now move in
// segments, each counted as it lands.
TEST_F(ShapedLink, OverLibfabricAMessageLastingFiveTimesThePeerTimeoutCompletes) {
  Up("--rate 100mbit");
  const std::string w = Workload(dir_, "64MiB");
  CliResult r = Launch(w, "--iterations 1 --peer-timeout 500ms --transport fabric");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("not been heard from"), std::string::npos) << r.output;
  const json results = json::parse(ReadFile(dir_ + "/out/results.json"));
  ASSERT_FALSE(results["collectives"].empty());
  for (const auto& c : results["collectives"]) {
    EXPECT_GE(c["duration_ns"].get<double>(), 2 * 5 * 0.5e9) << c.dump();
  }
}

// A host whose link is down before the run: the ranks cannot meet. The rank that cannot reach
// rank 0's rendezvous store says whom it waited for, at which address, and that the link may be
// down; it is the cause (exit 1: the network failed), so the launcher names it instead of
// telling the user to look at other nodes.
TEST_F(ShapedLink, ALinkDownBeforeTheRunNamesWhoWasWaitedForAndWhere) {
  Up("--rate 100mbit");
  const std::string w = Workload(dir_, "1MiB");
  CliResult down = RunCli(Genie("testbed fault " + name_ + " h1 --down"));
  ASSERT_EQ(down.exit_code, 0) << down.output;
  CliResult r = Launch(w, "--iterations 1 --peer-timeout 3s");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("rank 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("10.100.0.1"), std::string::npos) << r.output;  // h0: rank 0's store
  EXPECT_NE(r.output.find("link"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("down"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("look for the cause in the other nodes"), std::string::npos)
      << r.output;
}

// --bind to an address no interface of this host has: bad input (exit 2), naming the address
// and listing the host's own; not a rank "stopped because another rank failed" (75).
TEST(BindAddress, AnAddressThisHostLacksIsBadInputNamingItAndTheHostsAddresses) {
  const std::string dir = FreshDir("liveness-bind");
  const std::string w = Workload(dir, "1MiB");
  for (const char* transport : {"tcp", "fabric"}) {
    CliResult r = RunCli(Genie(std::string("launch -n 2 -- run ") + w + " -o " + dir + "/out-" +
                               transport + " --bind 192.0.2.77 --transport " + transport +
                               " --peer-timeout 5s"));
    EXPECT_EQ(r.exit_code, 2) << transport << ": " << r.output;
    EXPECT_NE(r.output.find("192.0.2.77"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("not an address of this host"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("127.0.0.1"), std::string::npos) << r.output;  // lo, listed
    EXPECT_EQ(r.output.find("look for the cause in the other nodes"), std::string::npos)
        << r.output;
  }
}

}  // namespace
}  // namespace genie::testing
