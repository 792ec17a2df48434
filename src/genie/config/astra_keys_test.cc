// Nothing in an ASTRA-sim configuration is silently ignored: every key of every shipped example
// (tests/data/astra-sim-configs: system.json, network.yml, memory.json) and every key ASTRA-sim
// reads, set to a value other than genie's behaviour, is either modelled (the list below,
// docs/configs.md "Every ASTRA-sim key") or named in a warning that says what genie does.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "genie/config/memory_config.h"
#include "genie/config/network_config.h"
#include "genie/config/system_config.h"
#include "tests/support/file.h"

namespace genie::config {
namespace {

using ::genie::testing::ReadFile;

namespace fs = std::filesystem;
const std::string kDir = std::string(GENIE_DATA_DIR) + "/astra-sim-configs/";

// system.json keys genie models whatever their value (model-shared-bus: 0 is modelled, 1 is
// refused by PrepareRun, see runtime/run_setup_test.cc).
const std::set<std::string> kModelledSystemKeys = {"scheduling-policy",
                                                   "endpoint-delay",
                                                   "active-chunks-per-dimension",
                                                   "preferred-dataset-splits",
                                                   "all-reduce-implementation",
                                                   "all-gather-implementation",
                                                   "reduce-scatter-implementation",
                                                   "all-to-all-implementation",
                                                   "all-reduce-implementation-custom",
                                                   "all-gather-implementation-custom",
                                                   "reduce-scatter-implementation-custom",
                                                   "all-to-all-implementation-custom",
                                                   "collective-optimization",
                                                   "local-mem-bw",
                                                   "peak-perf",
                                                   "roofline-enabled",
                                                   "model-shared-bus"};
// Keys whose value here is what genie does; any other value must be warned about.
const std::map<std::string, std::string> kModelledAt = {
    {"boost-mode", "0"},      {"intra-dimension-scheduling", "\"FIFO\""},
    {"replay-only", "0"},     {"trace-enabled", "0"},
    {"track-local-mem", "0"}, {"inter-dimension-scheduling", "\"baseline\""}};

bool Warned(const std::vector<std::string>& warnings, const std::string& key) {
  for (const auto& w : warnings) {
    if (w.find("key \"" + key + "\"") != std::string::npos) return true;
  }
  return false;
}

// Every key of `text` (a system.json) is modelled, warned or listed as unknown.
void ExpectEveryKeyAccountedFor(const std::string& text, const std::string& origin) {
  auto c = ParseSystemConfig(text, origin);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const nlohmann::json j = nlohmann::json::parse(text);
  for (const auto& [key, value] : j.items()) {
    if (kModelledSystemKeys.count(key)) continue;
    auto at = kModelledAt.find(key);
    if (at != kModelledAt.end() && value == nlohmann::json::parse(at->second)) {
      EXPECT_FALSE(Warned(c->unmodelled, key)) << origin << ": " << key << " is modelled here";
      continue;
    }
    const bool unknown =
        std::find(c->ignored_keys.begin(), c->ignored_keys.end(), key) != c->ignored_keys.end();
    EXPECT_TRUE(unknown || Warned(c->unmodelled, key))
        << origin << ": key \"" << key << "\" = " << value.dump()
        << " is neither modelled nor named in a warning";
  }
}

TEST(AstraKeys, EveryExampleSystemKeyIsModelledOrWarned) {
  int seen = 0;
  for (const auto& e : fs::directory_iterator(kDir)) {
    const std::string p = e.path().string();
    if (e.path().extension() != ".json") continue;
    const std::string text = ReadFile(p);
    if (text.find("memory-type") != std::string::npos) continue;  // a memory.json
    SCOPED_TRACE(p);
    ExpectEveryKeyAccountedFor(text, p);
    ++seen;
  }
  EXPECT_GE(seen, 3);  // HGX-H100-validated, Ring_4chunks, custom_collective
}

// Every key ASTRA-sim's Sys::initialize_sys (and the older Themis-era Sys) reads, each set to a
// value genie does not do.
TEST(AstraKeys, EveryAstraSimSystemKeyAtAnOddValueIsModelledOrWarned) {
  const std::string text = R"({
    "scheduling-policy": "FIFO", "endpoint-delay": 7, "active-chunks-per-dimension": 2,
    "preferred-dataset-splits": 3,
    "all-reduce-implementation": ["ring", "direct"], "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["direct"],
    "collective-optimization": "localBWAware", "local-mem-bw": 100, "local-reduction-delay": 5,
    "peak-perf": 10, "roofline-enabled": 1, "replay-only": 1, "trace-enabled": 1,
    "track-local-mem": 1, "L": 1, "o": 2, "g": 3, "G": 0.5, "model-shared-bus": 0,
    "boost-mode": 1, "intra-dimension-scheduling": "smallestFirst",
    "inter-dimension-scheduling": "offlineGreedy", "an-unknown-key": 1})";
  ExpectEveryKeyAccountedFor(text, "odd.json");
  auto c = ParseSystemConfig(text, "odd.json");
  ASSERT_TRUE(c.ok());
  // What genie does instead is said, not just that the key is ignored.
  for (const auto& [key, says] : std::map<std::string, std::string>{
           {"boost-mode", "simulates every NPU"},
           {"intra-dimension-scheduling", "scheduling-policy order (FIFO)"},
           {"inter-dimension-scheduling", "ascending order (baseline)"},
           {"replay-only", "simulates communication on the network"},
           {"trace-enabled", "genie's timeline"},
           {"track-local-mem", "does not track local memory"},
           {"local-reduction-delay", "3 x floor(bytes / local-mem-bw)"},
           {"G", "used only with model-shared-bus: 1"}}) {
    bool found = false;
    for (const auto& w : c->unmodelled) {
      if (w.find("key \"" + key + "\"") != std::string::npos && w.find(says) != std::string::npos) {
        found = true;
      }
    }
    EXPECT_TRUE(found) << key << ": no warning saying \"" << says << "\"";
  }
  EXPECT_EQ(c->ignored_keys, std::vector<std::string>{"an-unknown-key"});
  // The warnings are kept with the configuration as used.
  EXPECT_EQ(c->ToJson()["unmodelled-keys"].size(), c->unmodelled.size());
}

TEST(AstraKeys, DefaultsGenieModelsAreNotWarned) {
  auto c = ParseSystemConfig(
      R"({"boost-mode": 0, "intra-dimension-scheduling": "FIFO", "replay-only": 0,
          "inter-dimension-scheduling": "baseline", "trace-enabled": 0,
          "track-local-mem": 0})",
      "d.json");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->unmodelled.empty()) << c->unmodelled.front();
  // L/o/g/G are read by the shared-bus model only; with it on, genie refuses the file
  // (PrepareRun), so they are not warned about twice.
  auto bus = ParseSystemConfig(R"({"model-shared-bus": 1, "L": 1, "G": 2})", "b.json");
  ASSERT_TRUE(bus.ok());
  EXPECT_TRUE(bus->unmodelled.empty());
}

TEST(AstraKeys, EveryExampleNetworkAndMemoryKeyIsRead) {
  int networks = 0, memories = 0;
  for (const auto& e : fs::directory_iterator(kDir)) {
    const std::string p = e.path().string();
    SCOPED_TRACE(p);
    if (e.path().extension() == ".yml") {
      auto n = LoadNetworkConfig(p);
      ASSERT_TRUE(n.ok()) << n.status().message();
      EXPECT_TRUE(n->ignored_keys.empty());
      YAML::Node root = YAML::LoadFile(p);
      for (const auto& item : root) {
        const std::string k = item.first.as<std::string>();
        EXPECT_TRUE(k == "topology" || k == "npus_count" || k == "bandwidth" || k == "latency")
            << k;
      }
      ++networks;
    } else if (e.path().extension() == ".json" &&
               ReadFile(p).find("memory-type") != std::string::npos) {
      auto m = LoadMemoryConfig(p);
      ASSERT_TRUE(m.ok()) << m.status().message();
      EXPECT_TRUE(m->warnings.empty());
      ++memories;
    }
  }
  EXPECT_GE(networks, 4);
  EXPECT_GE(memories, 1);
}

TEST(AstraKeys, UnknownNetworkAndMemoryKeysAreWarned) {
  auto n = ParseNetworkConfig(
      "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n"
      "links_per_tile: [ 2 ]\n",
      "n.yml");
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(n->ignored_keys, std::vector<std::string>{"links_per_tile"});

  auto m = ParseMemoryConfig(
      R"({"memory-type": "MEMORY_POOL", "remote-mem-bw": 10, "num-npus-per-node": 2,
          "remote-mem-size": 1})",
      "m.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->warnings.size(), 2u);
  EXPECT_NE(m->warnings[0].find("used only by PER_NODE_MEMORY_EXPANSION"), std::string::npos)
      << m->warnings[0];
  EXPECT_NE(m->warnings[1].find("unknown memory key \"remote-mem-size\""), std::string::npos)
      << m->warnings[1];
}

}  // namespace
}  // namespace genie::config
