// `genie gen` end to end: traces that carry the same nodes as ASTRA-sim's shipped
// microbenchmarks, a 1,024-rank all-reduce, a chain of 1,000 x 1 ms compute nodes, and that
// `genie inspect` reads them all back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "et_def.pb.h"
#include "tests/support/cli.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

namespace fs = std::filesystem;
const std::string kTraces = Data("traces");

// Decodes a (non-gzip) ET file with protobuf directly: varint32 length, message, ...
struct Decoded {
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;
};

Decoded Decode(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  Decoded d;
  size_t pos = 0;
  bool first = true;
  while (pos < bytes.size()) {
    uint32_t len = 0;
    int shift = 0;
    while (true) {
      auto c = static_cast<unsigned char>(bytes.at(pos++));
      len |= static_cast<uint32_t>(c & 0x7f) << shift;
      shift += 7;
      if (c < 0x80) break;
    }
    std::string msg = bytes.substr(pos, len);
    pos += len;
    if (first) {
      EXPECT_TRUE(d.metadata.ParseFromString(msg)) << path;
      first = false;
    } else {
      d.nodes.emplace_back();
      EXPECT_TRUE(d.nodes.back().ParseFromString(msg)) << path;
    }
  }
  return d;
}

class GenE2eTest : public ::testing::Test {
 protected:
  TempDir tmp_{"gen-e2e"};
  fs::path dir_ = tmp_.path();
};

TEST_F(GenE2eTest, AllReduce8RanksCarriesTheShippedMicrobenchmarkNodes) {
  CliResult r = RunGenie("gen collective --type all_reduce --size 1MiB --ranks 8 --output " +
                         (dir_ / "all_reduce").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int rank = 0; rank < 8; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    Decoded mine = Decode((dir_ / ("all_reduce." + std::to_string(rank) + ".et")).string());
    Decoded shipped =
        Decode(kTraces + "/astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce." +
               std::to_string(rank) + ".et");
    EXPECT_EQ(mine.metadata.version(), shipped.metadata.version());
    ASSERT_EQ(mine.nodes.size(), 1u);
    ASSERT_EQ(shipped.nodes.size(), 1u);
    const auto& a = mine.nodes[0];
    const auto& b = shipped.nodes[0];
    EXPECT_EQ(a.id(), b.id());
    EXPECT_EQ(a.name(), b.name());
    EXPECT_EQ(a.type(), b.type());
    EXPECT_EQ(a.data_deps_size(), b.data_deps_size());
    EXPECT_EQ(a.ctrl_deps_size(), b.ctrl_deps_size());
    EXPECT_EQ(a.duration_micros(), b.duration_micros());
    ASSERT_EQ(a.attr_size(), b.attr_size());
    for (int i = 0; i < a.attr_size(); ++i) {
      EXPECT_EQ(a.attr(i).name(), b.attr(i).name());
      EXPECT_EQ(a.attr(i).value_case(), b.attr(i).value_case()) << a.attr(i).name();
      EXPECT_EQ(a.attr(i).SerializeAsString(), b.attr(i).SerializeAsString()) << a.attr(i).name();
    }
    // Spelled out: is_cpu_op bool false, comm_type int64 0, comm_size int64 1 MiB.
    EXPECT_EQ(a.attr(0).name(), "is_cpu_op");
    EXPECT_EQ(a.attr(0).value_case(), ChakraProtoMsg::AttributeProto::kBoolVal);
    EXPECT_EQ(a.attr(2).name(), "comm_size");
    EXPECT_EQ(a.attr(2).value_case(), ChakraProtoMsg::AttributeProto::kInt64Val);
    EXPECT_EQ(a.attr(2).int64_val(), 1048576);
  }
}

TEST_F(GenE2eTest, EveryCollectiveTypeInspects) {
  const char* kTypes[] = {
      "all_reduce", "reduce",         "all_gather",           "gather", "scatter", "broadcast",
      "all_to_all", "reduce_scatter", "reduce_scatter_block", "barrier"};
  for (const char* type : kTypes) {
    std::string out = (dir_ / type / "w").string();
    ASSERT_EQ(RunGenie(std::string("gen collective --type ") + type + " --size 64KiB --ranks 3 " +
                       "--output " + out)
                  .exit_code,
              0);
    CliResult r = RunGenie("inspect --json " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = nlohmann::json::parse(r.output);
    EXPECT_EQ(j["ranks"][2]["collectives"][type]["sizes"]["65536"], 1) << type;
  }
  CliResult bad = RunGenie("gen collective --type all_sum --output " + (dir_ / "x").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("unknown --type 'all_sum'"), std::string::npos) << bad.output;
}

TEST_F(GenE2eTest, AllReduce1024Ranks) {
  std::string out = (dir_ / "big" / "ar").string();
  CliResult g =
      RunGenie("gen collective --type all_reduce --size 1MiB --ranks 1024 --output " + out);
  ASSERT_EQ(g.exit_code, 0) << g.output;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "big")) files += e.is_regular_file();
  EXPECT_EQ(files, 1024u);
  Decoded last = Decode(out + ".1023.et");
  ASSERT_EQ(last.nodes.size(), 1u);
  EXPECT_EQ(last.nodes[0].id(), 1023u);
  EXPECT_EQ(last.nodes[0].name(), "all_reduce_1024npus_1MB");
  CliResult r = RunGenie("inspect --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output.substr(0, 2000);
  auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["ranks"].size(), 1024u);
  EXPECT_EQ(j["ranks"][1023]["collectives"]["all_reduce"]["total_bytes"], 1048576);
}

TEST_F(GenE2eTest, ComputeChainOf1000OneMillisecondNodes) {
  std::string out = (dir_ / "chain").string();
  CliResult g = RunGenie("gen compute-chain --count 1000 --duration 1ms --ranks 1 --output " + out);
  ASSERT_EQ(g.exit_code, 0) << g.output;
  Decoded d = Decode(out + ".0.et");
  ASSERT_EQ(d.nodes.size(), 1000u);
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const auto& n = d.nodes[i];
    ASSERT_EQ(n.id(), i);
    EXPECT_EQ(n.type(), ChakraProtoMsg::COMP_NODE);
    EXPECT_EQ(n.duration_micros(), 1000u);
    ASSERT_EQ(n.data_deps_size(), i == 0 ? 0 : 1);
    if (i > 0) {
      EXPECT_EQ(n.data_deps(0), i - 1);
    }
    // Like the shipped one_comp_node: is_cpu_op as a bool.
    ASSERT_EQ(n.attr_size(), 1);
    EXPECT_EQ(n.attr(0).name(), "is_cpu_op");
    EXPECT_EQ(n.attr(0).value_case(), ChakraProtoMsg::AttributeProto::kBoolVal);
  }
  CliResult r = RunGenie("inspect --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["ranks"][0]["compute_ns"], 1'000'000'000);
  EXPECT_EQ(j["ranks"][0]["nodes_by_type"]["COMP_NODE"], 1000);
  CliResult frac = RunGenie("gen compute-chain --count 3 --duration 1500ns --output " + out);
  EXPECT_EQ(frac.exit_code, 1);
  EXPECT_NE(frac.output.find("whole number of microseconds"), std::string::npos) << frac.output;
}

namespace replicate {

// "sys[r] finished, ..." lines by rank.
std::map<int, std::string> SysLines(const std::string& output) {
  std::map<int, std::string> lines;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("sys[", 0) != 0) continue;
    const size_t close = line.find(']');
    lines[std::stoi(line.substr(4, close - 4))] = line.substr(close + 1);
  }
  return lines;
}

}  // namespace replicate

// Each copy of a replicated workload reproduces the original's per-rank figures exactly, in
// both ASTRA-sim models: comm groups, the world group and point-to-point peers were renumbered,
// and the copies never talk to each other.
TEST_F(GenE2eTest, ReplicatedCopiesReproduceTheOriginalPerRankFigures) {
  const std::string gpt = Data("traces/generated/stg/gpt_dp2_tp2_pp2");
  const std::string world = (dir_ / "ar" / "ar").string();
  ASSERT_EQ(
      RunGenie("gen collective --type all_reduce --size 64KiB --ranks 4 -o " + world).exit_code, 0);
  const std::string net = (dir_ / "sw.yml").string();
  std::ofstream(net) << "topology: [ Switch ]\nnpus_count: [ 64 ]\nbandwidth: [ 50.0 ]\n"
                        "latency: [ 500.0 ]\n";
  const int copies = 3;
  for (const std::string& w : {gpt, world}) {
    const std::string out = (dir_ / ("rep_" + fs::path(w).filename().string()) / "w").string();
    CliResult g =
        RunGenie("gen replicate " + w + " --copies " + std::to_string(copies) + " -o " + out);
    ASSERT_EQ(g.exit_code, 0) << g.output;
    for (const char* model : {"aware", "unaware"}) {
      CliResult a = RunGenie("simulate " + w + " --network " + net + " --network-model " + model);
      CliResult b = RunGenie("simulate " + out + " --network " + net + " --network-model " + model);
      ASSERT_EQ(a.exit_code, 0) << a.output;
      ASSERT_EQ(b.exit_code, 0) << b.output;
      auto orig = replicate::SysLines(a.output), rep = replicate::SysLines(b.output);
      const int n = static_cast<int>(orig.size());
      ASSERT_GT(n, 0) << a.output;
      ASSERT_EQ(static_cast<int>(rep.size()), n * copies) << b.output;
      for (int r = 0; r < n * copies; ++r) {
        EXPECT_EQ(rep[r], orig[r % n]) << w << " (" << model << "), replicated rank " << r;
      }
    }
  }
}

}  // namespace
}  // namespace genie::testing
