// genie gen's generators: traces equal to ASTRA-sim's shipped microbenchmarks, and chains.
#include "genie/workload/generator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "genie/trace/et_reader.h"
#include "genie/workload/rank_graph.h"
#include "tests/support/file.h"
#include "tests/support/temp_dir.h"

namespace genie::workload {
namespace {

using ::genie::testing::ReadFile;
using ::genie::testing::TempDir;

namespace fs = std::filesystem;

class GeneratorTest : public ::testing::Test {
 protected:
  TempDir tmp_{"generator"};
  fs::path dir_ = tmp_.path();
};

TEST_F(GeneratorTest, CollectivesAreByteIdenticalToShippedMicrobenchmarks) {
  for (auto [type, folder] : {std::pair{CollectiveType::kAllReduce, "all_reduce"},
                              std::pair{CollectiveType::kAllGather, "all_gather"},
                              std::pair{CollectiveType::kReduceScatter, "reduce_scatter"},
                              std::pair{CollectiveType::kAllToAll, "all_to_all"}}) {
    GenCollectiveOptions o;
    o.type = type;
    o.size = 1 << 20;
    o.ranks = 8;
    o.output = (dir_ / folder / folder).string();
    ASSERT_EQ(*GenerateCollective(o), 8);
    for (int r = 0; r < 8; ++r) {
      std::string shipped = std::string(GENIE_DATA_DIR) + "/traces/astra-sim/microbenchmarks/" +
                            folder + "/8npus_1MB/" + folder + "." + std::to_string(r) + ".et";
      std::string mine = o.output + "." + std::to_string(r) + ".et";
      EXPECT_EQ(ReadFile(mine), ReadFile(shipped)) << mine;
    }
  }
  EXPECT_EQ(SizeLabel(1 << 20), "1MB");
  EXPECT_EQ(SizeLabel(3 << 10), "3KB");
  EXPECT_EQ(SizeLabel(1000), "1000B");
}

TEST_F(GeneratorTest, ComputeChain) {
  GenComputeChainOptions o;
  o.count = 1000;
  o.duration = kNsPerMs;
  o.ranks = 2;
  o.gzip = true;
  o.output = (dir_ / "chain").string();
  ASSERT_EQ(*GenerateComputeChain(o), 2);
  auto g = RankGraph::Open(o.output + ".1.et", 1, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->size(), 1000u);
  TimeNs total = 0;
  NodeId expect = 0;
  while (!(*g)->ready().empty()) {
    ASSERT_EQ((*g)->ready().size(), 1u);  // a chain: one ready node at a time
    NodeId id = *(*g)->ready().begin();
    EXPECT_EQ(id, expect++);
    (*g)->Take(id);
    auto op = (*g)->Load(id);
    ASSERT_TRUE(op.ok());
    EXPECT_EQ(op->kind, OpKind::kCompute);
    EXPECT_FALSE(op->is_cpu_op);
    total += op->duration_ns;
    (*g)->Complete(id);
  }
  EXPECT_EQ(total, 1000 * kNsPerMs);
  o.duration = 1500;  // 1.5 us is not representable in duration_micros
  EXPECT_FALSE(GenerateComputeChain(o).ok());
}

}  // namespace
}  // namespace genie::workload
