// Custom-algorithm files: loading by the path's form, reading a file again when asked (nothing
// cached across loads), and resolving a system.json's path against its folder, then the working
// directory.
#include "genie/trace/custom_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/temp_dir.h"

namespace genie::trace {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;

const std::string kDir =
    std::string(GENIE_DATA_DIR) + "/traces/astra-sim/custom_ring_allreduce_8npus_1MB";

TEST(CustomFiles, LoadsMscclXmlOrAChakraPrefixByThePathsForm) {
  auto xml = LoadCustomAlgorithm(kDir + "/custom_allreduce.xml");
  ASSERT_TRUE(xml.ok()) << xml.status().ToString();
  EXPECT_EQ((*xml)->source, kDir + "/custom_allreduce.xml");
  EXPECT_EQ((*xml)->ranks, 8);
  auto et = LoadCustomAlgorithm(kDir + "/custom_allreduce");
  ASSERT_TRUE(et.ok()) << et.status().ToString();
  EXPECT_EQ((*et)->source, kDir + "/custom_allreduce");
  EXPECT_EQ((*et)->steps[0].size(), (*xml)->steps[0].size());
  auto missing = LoadCustomAlgorithm(kDir + "/nowhere.xml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(kDir + "/nowhere.xml"), std::string::npos);
}

TEST(CustomFiles, EachLoadReadsTheFileAsItIsNow) {
  // A process-wide cache keyed by path would hand back the first version.
  const TempDir tmp("custom-files");
  const fs::path dir = tmp.path();
  const std::string path = (dir / "algo.xml").string();
  std::ifstream in(kDir + "/custom_allreduce.xml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(path) << text;
  auto first = LoadCustomAlgorithm(path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)->name, "allreduce_ring_1channelsperring");
  const std::string from = "name=\"allreduce_ring_1channelsperring\"";
  text.replace(text.find(from), from.size(), "name=\"edited\"");
  std::ofstream(path) << text;
  auto second = LoadCustomAlgorithm(path);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ((*second)->name, "edited");
  EXPECT_EQ((*first)->name, "allreduce_ring_1channelsperring");  // the first load is unchanged
}

TEST(CustomFiles, PathsResolveAgainstTheConfigFolderThenTheWorkingDirectory) {
  const std::string config = kDir + "/system.json";  // only its folder matters
  auto p = ResolveCustomPath("custom_allreduce.xml", config);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, kDir + "/custom_allreduce.xml");
  p = ResolveCustomPath("custom_allreduce", config);  // a Chakra prefix
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, kDir + "/custom_allreduce");
  p = ResolveCustomPath(kDir + "/custom_allreduce.xml", "/tmp/cfg/system.json");  // absolute
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, kDir + "/custom_allreduce.xml");
  p = ResolveCustomPath("nowhere.xml", "/tmp/cfg/system.json");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("named in /tmp/cfg/system.json"), std::string::npos)
      << p.status().message();
  EXPECT_NE(p.status().message().find("/tmp/cfg/nowhere.xml"), std::string::npos)
      << p.status().message();
  EXPECT_NE(p.status().message().find(fs::current_path().string() + "/nowhere.xml"),
            std::string::npos)
      << p.status().message();
}

}  // namespace
}  // namespace genie::trace
