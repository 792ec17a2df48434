#include "genie/config/memory_config.h"

#include <gtest/gtest.h>

namespace genie::config {
namespace {

TEST(MemoryConfigTest, ShippedNoMemoryExpansion) {
  auto c = LoadMemoryConfig(std::string(GENIE_DATA_DIR) +
                            "/astra-sim-configs/no_memory_expansion.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->type, MemoryType::kNoMemoryExpansion);
  EXPECT_EQ(c->remote_mem_latency_ns, 0);
  EXPECT_EQ(c->ToJson()["memory-type"], "NO_MEMORY_EXPANSION");
}

TEST(MemoryConfigTest, AccessTimeRoundsLikeAstraSim) {
  auto c = ParseMemoryConfig(
      R"({"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 500,
          "remote-mem-bw": 50})",
      "m.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->AccessTimeNs(1'000'000), 500 + 20'000);  // 1e6 B / 50e9 B/s = 20 us
  EXPECT_EQ(c->AccessTimeNs(1'048'576), 500 + 20'971);  // 20,971.52 truncated
  EXPECT_EQ(c->QueueOf(5), -1);
}

TEST(MemoryConfigTest, QueuesPerNodeAndPool) {
  auto node = ParseMemoryConfig(
      R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-bw": 10, "num-nodes": 2,
          "num-npus-per-node": 4})",
      "n.json");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ(node->QueueOf(3), 0);
  EXPECT_EQ(node->QueueOf(4), 1);
  auto pool = ParseMemoryConfig(R"({"memory-type": "MEMORY_POOL", "remote-mem-bw": 10})", "p");
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->QueueOf(7), 0);
}

TEST(MemoryConfigTest, Errors) {
  auto bad = ParseMemoryConfig(R"({"memory-type": "HBM"})", "mem.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("mem.json"), std::string::npos);
  EXPECT_NE(bad.status().message().find("HBM"), std::string::npos);
  EXPECT_FALSE(ParseMemoryConfig(R"({"memory-type": "MEMORY_POOL"})", "m").ok());  // no bw
  EXPECT_FALSE(ParseMemoryConfig(R"({"remote-mem-latency": "fast"})", "m").ok());
  EXPECT_FALSE(ParseMemoryConfig("nope", "m").ok());
}

}  // namespace
}  // namespace genie::config
