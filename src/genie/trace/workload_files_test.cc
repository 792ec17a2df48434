// FindWorkload on the shipped folders and on made-up ones (gaps, several families).
#include "genie/trace/workload_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace genie::trace {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;
const std::string kData = std::string(GENIE_DATA_DIR) + "/traces";

TEST(WorkloadFilesTest, FolderWithOneFamilyAndCommGroupBeside) {
  auto w = FindWorkload(kData + "/generated/stg/llama_fsdp_dp4_tp2");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->name, "workload");
  ASSERT_EQ(w->rank_paths.size(), 8u);
  EXPECT_EQ(w->rank_paths[7], kData + "/generated/stg/llama_fsdp_dp4_tp2/workload.7.et");
  EXPECT_EQ(w->comm_group_path, kData + "/generated/stg/llama_fsdp_dp4_tp2/workload.json");
}

TEST(WorkloadFilesTest, RanksAreNumericallyOrdered) {
  auto w = FindWorkload(kData + "/astra-sim/resnet_dp");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->world_size(), 64);
  EXPECT_EQ(w->rank_paths[10], kData + "/astra-sim/resnet_dp/Resnet50_DataParallel.10.et");
  EXPECT_EQ(w->comm_group_path, "");
}

TEST(WorkloadFilesTest, PrefixAndRankFileAndSeveralFamilies) {
  auto w = FindWorkload(kData + "/generated/chakra_generator/one_comm_send_node");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->world_size(), 4);
  EXPECT_EQ(w->name, "one_comm_send_node");
  auto w2 = FindWorkload(kData + "/generated/chakra_generator/BARRIER.2.et");
  ASSERT_TRUE(w2.ok());
  EXPECT_EQ(w2->name, "BARRIER");
  auto many = FindWorkload(kData + "/generated/chakra_generator");
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("14 trace families"), std::string::npos);
  EXPECT_NE(many.status().message().find("two_comp_nodes_independent"), std::string::npos);
  auto none = FindWorkload(kData + "/generated/chakra_generator/nothing");
  EXPECT_EQ(none.status().code(), Status::Code::kNotFound);
}

TEST(WorkloadFilesTest, GapsAndExplicitCommGroup) {
  const TempDir tmp("workload-files");
  fs::path dir = tmp.path();
  for (int r : {0, 1, 3, 5}) std::ofstream(dir / ("w." + std::to_string(r) + ".et")) << "x";
  std::ofstream(dir / "notes.txt") << "x";
  auto gap = FindWorkload(dir.string());
  ASSERT_FALSE(gap.ok());
  EXPECT_NE(gap.status().message().find("missing 2 rank file(s): 2 4"), std::string::npos)
      << gap.status().message();
  fs::remove(dir / "w.3.et");
  fs::remove(dir / "w.5.et");
  std::ofstream(dir / "w.2.et.gz") << "x";
  std::ofstream(dir / "groups.json") << "{}";
  auto ok = FindWorkload((dir / "w").string(), (dir / "groups.json").string());
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->world_size(), 3);
  EXPECT_EQ(ok->rank_paths[2], (dir / "w.2.et.gz").string());
  EXPECT_EQ(ok->comm_group_path, (dir / "groups.json").string());
  EXPECT_FALSE(FindWorkload((dir / "w").string(), (dir / "missing.json").string()).ok());
  std::ofstream(dir / "comm_group.json") << "{}";
  EXPECT_EQ(FindWorkload(dir.string())->comm_group_path, (dir / "comm_group.json").string());
}

TEST(WorkloadFilesTest, ARankFileThatIsNoFileIsRefusedNamingIt) {
  const fs::path dir =
      fs::temp_directory_path() / ("genie_workload_files_bad_" + std::to_string(getpid()));
  for (const std::string kind : {"folder", "fifo", "dangling", "ok"}) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "w.0.et") << "x";
    std::ofstream(dir / "w.1.et") << "x";
    const fs::path last = dir / "w.2.et";
    if (kind == "folder") fs::create_directory(last);
    if (kind == "fifo") ASSERT_EQ(::mkfifo(last.c_str(), 0644), 0);
    if (kind == "dangling") fs::create_symlink(dir / "gone.et", last);
    if (kind == "ok") std::ofstream(last) << "x";
    for (const std::string& arg : {dir.string(), (dir / "w").string()}) {
      auto w = FindWorkload(arg);
      if (kind == "ok") {
        ASSERT_TRUE(w.ok()) << w.status().ToString();
        EXPECT_EQ(w->world_size(), 3);
        continue;
      }
      ASSERT_FALSE(w.ok()) << kind << " " << arg;
      EXPECT_NE(w.status().message().find(last.string() + ": the rank's trace file is"),
                std::string::npos)
          << w.status().message();
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace genie::trace
