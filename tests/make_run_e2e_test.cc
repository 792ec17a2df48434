// `make run` (scripts/run-default.sh) where no testbed can be built: with GENIE_RUN=loopback
// (as without root) it says why on stderr, then replays the shipped GPT step over loopback —
// checked once with --verify, then measured beside its prediction — and leaves the results.
// The testbed demo itself (root, ~2 minutes) is measured by hand: docs/prediction.md.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

TEST(MakeRun, WithoutATestbedItSaysWhyAndReplaysOverLoopback) {
  const std::string dir = FreshDir("make-run");
  const CliResult r =
      RunCli("GENIE_RUN=loopback GENIE_RUN_OUT=" + dir + "/out bash " +
                 Source("scripts/run-default.sh") + " " + GenieBinary() + " " + Data(""),
             Stderr::kApart);
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  EXPECT_NE(r.errors.find("make run: over loopback, not on a testbed: GENIE_RUN=loopback"),
            std::string::npos)
      << r.errors;
  EXPECT_NE(r.output.find("all correct"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("measured/predicted"), std::string::npos) << r.output;
  const auto results = nlohmann::json::parse(ReadFile(dir + "/out/results.json"));
  EXPECT_EQ(results["summary"]["iterations"], 5) << results["summary"].dump();
}

}  // namespace
}  // namespace genie::testing
