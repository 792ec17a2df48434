#include "genie/config/memory_config.h"

#include <gtest/gtest.h>

#include <limits>

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

// Every number of memory.json: wrong type, negative, zero where it divides, not finite,
// absurd magnitude -> an error naming the file and the key.
TEST(MemoryConfigTest, OutOfRangeNumbersAreErrorsNamingFileAndKey) {
  const std::pair<const char*, std::vector<const char*>> cases[] = {
      {"remote-mem-latency", {"-1", "1e30", "\"5\"", "[]"}},
      {"remote-mem-bw", {"-1", "1e-300", "1e300", "0", "\"50\""}},
      {"num-nodes", {"0", "-2", "1e30", "0.5", "\"2\""}},
      {"num-npus-per-node", {"0", "-4", "1e10", "0.9", "null"}},
  };
  for (const auto& [key, values] : cases) {
    for (const char* v : values) {
      const std::string text = std::string(R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", )") +
                               R"("remote-mem-bw": 10, "num-nodes": 2, "num-npus-per-node": 4, ")" +
                               key + "\": " + v + "}";
      auto c = ParseMemoryConfig(text, "mem.json");
      ASSERT_FALSE(c.ok()) << text;
      EXPECT_NE(c.status().message().find("mem.json: key \"" + std::string(key) + "\""),
                std::string::npos)
          << text << " -> " << c.status().message();
    }
  }
}

// An access too large for int64 ns saturates: the simulator then refuses it by name.
TEST(MemoryConfigTest, AccessTimeSaturatesInsteadOfWrapping) {
  auto c = ParseMemoryConfig(
      R"({"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 1e12,
          "remote-mem-bw": 1e-6})",
      "m.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->AccessTimeNs(~Bytes{0}), std::numeric_limits<TimeNs>::max());
  EXPECT_EQ(c->AccessTimeNs(1000), 1'000'000'000'000 + 1'000'000'000);  // 1 kB at 1 kB/s
}

// Found by running a deep input through fuzz/astra_config_fuzz: printing a deeply nested value in the error overflowed the
// stack.
TEST(MemoryConfigTest, DeeplyNestedValuesAreNamedNotPrinted) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto c = ParseMemoryConfig("{\"remote-mem-bw\": " + deep + "}", "mem.json");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("mem.json: key \"remote-mem-bw\": expected a number, found "
                                      "a list of 1 values"),
            std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace genie::config
