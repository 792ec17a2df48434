// PrepareRun and custom collectives: a system.json's *-implementation-custom file is found
// beside the config, read once up front and shared as data by every collective that names it;
// a broken file stops the setup with its line and the config that named it.
#include "genie/runtime/run_setup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/temp_dir.h"

namespace genie::runtime {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;

const std::string kDir =
    std::string(GENIE_DATA_DIR) + "/traces/astra-sim/custom_ring_allreduce_8npus_1MB";

class RunSetupCustomTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ifstream in(kDir + "/custom_allreduce.xml");
    xml_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    // Named relative to the system.json, which is not the working directory.
    std::ofstream(Path("system.json"))
        << R"({"all-reduce-implementation-custom": ["algo.xml"],
               "reduce-scatter-implementation-custom": ["algo.xml"]})";
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  Result<RunSetup> Prepare() {
    SetupFlags flags;
    flags.workload = kDir + "/custom_allreduce";
    flags.system_path = Path("system.json");
    return PrepareRun(flags);
  }

  TempDir tmp_{"run-setup"};
  fs::path dir_ = tmp_.path();
  std::string xml_;
};

TEST_F(RunSetupCustomTest, TheFileIsLoadedOnceAndSharedAsData) {
  std::ofstream(Path("algo.xml")) << xml_;
  auto setup = Prepare();
  ASSERT_TRUE(setup.ok()) << setup.status().ToString();
  const auto& impls = setup->exec.implementations;
  const CollectiveChoice& ar = impls.at(CollectiveType::kAllReduce);
  const CollectiveChoice& rs = impls.at(CollectiveType::kReduceScatter);
  ASSERT_NE(ar.custom, nullptr);
  EXPECT_EQ(ar.algorithms, std::vector<collective::Algorithm>{collective::Algorithm::kCustom});
  EXPECT_EQ(ar.custom->source, Path("algo.xml"));
  EXPECT_EQ(ar.custom->ranks, 8);
  EXPECT_EQ(ar.custom.get(), rs.custom.get());  // one load for both collectives
  EXPECT_EQ(impls.at(CollectiveType::kAllGather).custom, nullptr);
}

TEST_F(RunSetupCustomTest, ABrokenFileNamesItsLineAndTheConfig) {
  std::string broken = xml_;
  const std::string from = R"(<step s="1" type="rrc")";
  broken.replace(broken.find(from), from.size(), R"(<step s="1" type="xyz")");
  std::ofstream(Path("algo.xml")) << broken;
  auto setup = Prepare();
  ASSERT_FALSE(setup.ok());
  const std::string& m = setup.status().message();
  EXPECT_NE(m.find(Path("algo.xml") + ":5: unknown step type 'xyz'"), std::string::npos) << m;
  EXPECT_NE(m.find("named in " + Path("system.json") + " as all-reduce-implementation-custom"),
            std::string::npos)
      << m;
}

TEST_F(RunSetupCustomTest, AMissingFileListsWhereItWasLookedFor) {
  auto setup = Prepare();
  ASSERT_FALSE(setup.ok());
  const std::string& m = setup.status().message();
  EXPECT_NE(m.find("custom collective 'algo.xml' named in " + Path("system.json")),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(Path("algo.xml")), std::string::npos) << m;
}

}  // namespace
}  // namespace genie::runtime
