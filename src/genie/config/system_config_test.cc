#include "genie/config/system_config.h"

#include <gtest/gtest.h>

namespace genie::config {
namespace {

const std::string kDir = std::string(GENIE_DATA_DIR) + "/astra-sim-configs/";

TEST(SystemConfigTest, HgxH100Validated) {
  auto c = LoadSystemConfig(kDir + "HGX-H100-validated.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->scheduling_policy, SchedulingPolicy::kLifo);
  EXPECT_EQ(c->endpoint_delay_ns, 10);
  EXPECT_EQ(c->active_chunks_per_dimension, 2);
  EXPECT_EQ(c->preferred_dataset_splits, 4);
  for (const char* coll : {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"}) {
    ASSERT_NE(c->ImplementationsFor(coll), nullptr) << coll;
    EXPECT_EQ(*c->ImplementationsFor(coll), (std::vector<CollectiveImpl>{{"ring", -1}}));
  }
  EXPECT_EQ(c->collective_optimization, CollectiveOptimization::kLocalBwAware);
  EXPECT_EQ(c->local_mem_bw_gbps, 3350.0);
  EXPECT_EQ(c->boost_mode, 0);
  EXPECT_FALSE(c->roofline_enabled);
  EXPECT_FALSE(c->Has("roofline-enabled"));
  EXPECT_TRUE(c->Has("local-mem-bw"));
  EXPECT_EQ(c->local_reduction_delay_ns, 1);  // ASTRA-sim's default
  EXPECT_TRUE(c->ignored_keys.empty());
  EXPECT_EQ(c->path, kDir + "HGX-H100-validated.json");
}

TEST(SystemConfigTest, Ring4Chunks) {
  auto c = LoadSystemConfig(kDir + "Ring_4chunks.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->active_chunks_per_dimension, 1);
  EXPECT_EQ(c->preferred_dataset_splits, 4);
  EXPECT_EQ(c->local_mem_bw_gbps, 1600.0);
  EXPECT_EQ(c->peak_perf_tflops, 900.0);
  EXPECT_FALSE(c->roofline_enabled);
  EXPECT_TRUE(c->Has("roofline-enabled"));
  EXPECT_EQ(c->collective_optimization, CollectiveOptimization::kLocalBwAware);
}

TEST(SystemConfigTest, CustomCollective) {
  auto c = LoadSystemConfig(kDir + "custom_collective.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->scheduling_policy, SchedulingPolicy::kFifo);
  EXPECT_EQ(c->preferred_dataset_splits, 1);
  EXPECT_EQ(c->local_mem_bw_gbps, 50.0);
  EXPECT_EQ(c->endpoint_delay_ns, 10);  // default
  EXPECT_EQ(c->ImplementationsFor("all-reduce"), nullptr);
  ASSERT_EQ(c->custom_implementations.count("all-reduce"), 1u);
  EXPECT_EQ(c->custom_implementations.at("all-reduce"),
            "examples/system/custom_collectives/custom_ring_allreduce_8npus_1MB/custom_allreduce");
}

TEST(SystemConfigTest, DefaultsWhenEmpty) {
  auto c = ParseSystemConfig("{}", "empty.json");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->scheduling_policy, SchedulingPolicy::kLifo);
  EXPECT_EQ(c->endpoint_delay_ns, 10);
  EXPECT_EQ(c->active_chunks_per_dimension, 1);
  EXPECT_EQ(c->preferred_dataset_splits, 1);
  EXPECT_EQ(c->collective_optimization, CollectiveOptimization::kBaseline);
  EXPECT_EQ(c->local_mem_bw_gbps, 0.0);
  EXPECT_TRUE(c->implementations.empty());
}

TEST(SystemConfigTest, ParsesEveryImplementationName) {
  auto c = ParseSystemConfig(
      R"({"all-reduce-implementation": ["ring", "direct", "direct8", "oneDirect16"],
          "all-gather-implementation": ["halvingDoubling", "oneHalvingDoubling"],
          "reduce-scatter-implementation": "oneRing",
          "all-to-all-implementation": ["doubleBinaryTree"],
          "roofline-enabled": true, "replay-only": 1, "L": 2.5, "model-shared-bus": 1,
          "local-reduction-delay": 3, "scheduling-policy": "EXPLICIT",
          "collective-optimization": "baseline"})",
      "s.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto& ar = *c->ImplementationsFor("all-reduce");
  ASSERT_EQ(ar.size(), 4u);
  EXPECT_EQ(ar[1], (CollectiveImpl{"direct", -1}));
  EXPECT_EQ(ar[2], (CollectiveImpl{"direct", 8}));
  EXPECT_EQ(ar[3], (CollectiveImpl{"oneDirect", 16}));
  EXPECT_EQ(ar[2].ToString(), "direct8");
  EXPECT_EQ((*c->ImplementationsFor("reduce-scatter"))[0].name, "oneRing");
  EXPECT_TRUE(c->roofline_enabled);
  EXPECT_TRUE(c->replay_only);
  EXPECT_TRUE(c->model_shared_bus);
  EXPECT_EQ(c->L, 2.5);
  EXPECT_EQ(c->local_reduction_delay_ns, 3);
  EXPECT_EQ(c->scheduling_policy, SchedulingPolicy::kExplicit);
}

TEST(SystemConfigTest, UnknownValuesAreErrorsNamingFileAndKey) {
  auto bad_policy = ParseSystemConfig(R"({"scheduling-policy": "RANDOM"})", "sys.json");
  ASSERT_FALSE(bad_policy.ok());
  EXPECT_NE(bad_policy.status().message().find("sys.json"), std::string::npos);
  EXPECT_NE(bad_policy.status().message().find("scheduling-policy"), std::string::npos);
  EXPECT_NE(bad_policy.status().message().find("RANDOM"), std::string::npos);

  auto bad_algo = ParseSystemConfig(R"({"all-reduce-implementation": ["ring", "tree"]})", "a");
  ASSERT_FALSE(bad_algo.ok());
  EXPECT_NE(bad_algo.status().message().find("\"tree\""), std::string::npos);
  EXPECT_NE(bad_algo.status().message().find("all-reduce-implementation"), std::string::npos);

  EXPECT_FALSE(ParseSystemConfig(R"({"collective-optimization": "fast"})", "a").ok());
  EXPECT_FALSE(ParseSystemConfig(R"({"endpoint-delay": "10"})", "a").ok());
  EXPECT_FALSE(ParseSystemConfig(R"({"active-chunks-per-dimension": 0})", "a").ok());
  EXPECT_FALSE(ParseSystemConfig(R"({"all-reduce-implementation-custom": ["a", "b"]})", "a").ok());
  EXPECT_FALSE(ParseSystemConfig(R"({"all-reduce-implementation": ["direct0"]})", "a").ok());
  EXPECT_FALSE(ParseSystemConfig("{ not json", "a").ok());
  EXPECT_FALSE(ParseSystemConfig("[1, 2]", "a").ok());
}

TEST(SystemConfigTest, UnknownKeysAreKeptNotFatal) {
  auto c = ParseSystemConfig(R"({"endpoint-delay": 7, "my-key": 1})", "a");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->endpoint_delay_ns, 7);
  EXPECT_EQ(c->ignored_keys, std::vector<std::string>{"my-key"});
}

TEST(SystemConfigTest, MissingFileNamesPath) {
  auto c = LoadSystemConfig("/nonexistent/sys.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kNotFound);
  EXPECT_NE(c.status().message().find("/nonexistent/sys.json"), std::string::npos);
}

TEST(SystemConfigTest, ToJsonRoundTrips) {
  auto c = LoadSystemConfig(kDir + "HGX-H100-validated.json");
  ASSERT_TRUE(c.ok());
  nlohmann::json j = c->ToJson();
  EXPECT_EQ(j["scheduling-policy"], "LIFO");
  EXPECT_EQ(j["active-chunks-per-dimension"], 2);
  EXPECT_EQ(j["all-reduce-implementation"], nlohmann::json::array({"ring"}));
  EXPECT_EQ(j["collective-optimization"], "localBWAware");
  EXPECT_EQ(j["local-mem-bw"], 3350.0);
  // What ToJson writes parses back to the same settings.
  j.erase("path");
  j.erase("keys-set-by-file");
  j.erase("ignored-keys");
  auto again = ParseSystemConfig(j.dump(), "roundtrip");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->active_chunks_per_dimension, 2);
  EXPECT_EQ(*again->ImplementationsFor("all-to-all"), *c->ImplementationsFor("all-to-all"));
  EXPECT_EQ(again->local_mem_bw_gbps, 3350.0);
}

// Every number in system.json, reviewed the same way: a wrong type, a negative, zero where it
// divides or counts, a value that is not finite, or an absurd magnitude is an error naming the
// file and the key (never a crash, an uncaught exception, or a silent wrap).
TEST(SystemConfigTest, OutOfRangeNumbersAreErrorsNamingFileAndKey) {
  const std::pair<const char*, std::vector<const char*>> cases[] = {
      {"endpoint-delay", {"-1", "1e30", "\"10\"", "[10]", "null", "1e13"}},
      {"active-chunks-per-dimension", {"0", "-3", "1e8", "4097", "\"1\"", "true"}},
      // 1e8 splits once grew a run past 3 GB before the first event.
      {"preferred-dataset-splits", {"0", "-1", "1e8", "4097", "1e30", "{}", "0.5"}},
      {"local-mem-bw", {"-1", "1e-300", "1e300", "\"fast\""}},
      {"local-reduction-delay", {"-1", "1e30", "[]"}},
      {"peak-perf", {"-900", "1e-300", "1e300", "\"900\""}},
      {"L", {"-1", "1e30", "\"x\""}},
      {"o", {"-0.5", "1e300"}},
      {"g", {"-1", "1e13"}},
      {"G", {"-2"}},
      {"boost-mode", {"2", "-1", "1e30", "\"on\""}},
      {"roofline-enabled", {"\"yes\"", "[]"}},
  };
  for (const auto& [key, values] : cases) {
    for (const char* v : values) {
      const std::string text = std::string("{\"") + key + "\": " + v + "}";
      auto c = ParseSystemConfig(text, "sys.json");
      ASSERT_FALSE(c.ok()) << text;
      EXPECT_EQ(c.status().code(), Status::Code::kInvalidArgument) << text;
      EXPECT_NE(c.status().message().find("sys.json: key \"" + std::string(key) + "\""),
                std::string::npos)
          << text << " -> " << c.status().message();
    }
  }
  auto splits = ParseSystemConfig(R"({"preferred-dataset-splits": 1e8})", "sys.json");
  ASSERT_FALSE(splits.ok());
  EXPECT_NE(splits.status().message().find("from 1 to 4096"), std::string::npos)
      << splits.status().message();
}

TEST(SystemConfigTest, ValuesAtTheBoundsAreAccepted) {
  auto c = ParseSystemConfig(
      R"({"endpoint-delay": 1e12, "active-chunks-per-dimension": 4096,
          "preferred-dataset-splits": 4096.9, "local-mem-bw": 1e-6, "peak-perf": 1e9,
          "local-reduction-delay": 0, "L": 0, "G": 1e12, "boost-mode": 1})",
      "sys.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->endpoint_delay_ns, 1'000'000'000'000);
  EXPECT_EQ(c->preferred_dataset_splits, 4096);  // truncated, as ASTRA-sim's int fields
  EXPECT_EQ(c->local_mem_bw_gbps, 1e-6);
  auto zeros = ParseSystemConfig(R"({"local-mem-bw": 0, "peak-perf": 0})", "sys.json");
  ASSERT_TRUE(zeros.ok()) << zeros.status().ToString();  // 0 = not given
  EXPECT_EQ(zeros->local_mem_bw_gbps, 0);
}

// Found by running a deep input through fuzz/astra_config_fuzz: the error for a mistyped value printed the value, which
// recursed once per nesting level; a deeply nested one overflowed the stack instead of naming
// the key.
TEST(SystemConfigTest, DeeplyNestedValuesAreNamedNotPrinted) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const char* key : {"endpoint-delay", "roofline-enabled", "scheduling-policy",
                          "all-reduce-implementation", "peak-perf"}) {
    const std::string text = std::string("{\"") + key + "\": " + deep + "}";
    auto c = ParseSystemConfig(text, "sys.json");
    ASSERT_FALSE(c.ok()) << key;
    EXPECT_NE(c.status().message().find(std::string("sys.json: key \"") + key + "\""),
              std::string::npos)
        << c.status().message();
    EXPECT_NE(c.status().message().find("a list of 1 values"), std::string::npos)
        << c.status().message();
    EXPECT_LT(c.status().message().size(), 300u);
  }
  auto in_list =
      ParseSystemConfig("{\"all-gather-implementation\": [\"ring\", " + deep + "]}", "sys.json");
  ASSERT_FALSE(in_list.ok());
  EXPECT_NE(in_list.status().message().find("found a list of 1 values in it"), std::string::npos)
      << in_list.status().message();
  // Scalars are still quoted as written, long ones cut.
  auto s = ParseSystemConfig("{\"endpoint-delay\": \"" + std::string(1000, 'x') + "\"}", "sys.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("found \"xxxx"), std::string::npos) << s.status().message();
  EXPECT_LT(s.status().message().size(), 300u);
}

}  // namespace
}  // namespace genie::config
