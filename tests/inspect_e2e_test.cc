// `genie inspect` end to end on the shipped workloads.
//
// Golden files: tests/golden/inspect/<workload>.json hold, for 15 workloads, the figures of
// rank 0 and of the last rank (node counts by type, collectives by type and their bytes,
// compute and CPU time, sends/receives, CPU-side collective wrappers). Their figures were
// decoded independently of genie's reader by src/genie/trace/decode_et.py, a raw protobuf-wire
// decoder in Python (`python3 src/genie/trace/decode_et.py <file>` prints them per rank).
// To regenerate them after a deliberate change in what inspect reports:
//
//   GENIE_UPDATE_GOLDEN=1 ctest --test-dir build/release -R InspectE2eTest.GoldenFigures
//
// which rewrites the files from genie's own output (the test then fails, naming the files it
// wrote); check the diff against decode_et.py before committing it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

namespace fs = std::filesystem;
const std::string kTraces = Data("traces");

nlohmann::json InspectJson(const std::string& args, int expect_exit) {
  CliResult r = RunGenie("inspect --json " + args, Stderr::kApart);
  EXPECT_EQ(r.exit_code, expect_exit) << args << "\n" << r.output.substr(0, 3000) << r.errors;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.output.substr(0, 2000) << r.errors;
  return j;
}

struct GoldenWorkload {
  const char* workload;  // under traces/, and the golden file's name under tests/golden/inspect
  const char* args;      // extra inspect options
};

const GoldenWorkload kGolden[] = {
    {"astra-sim/microbenchmarks/all_gather/16npus_1MB", ""},
    {"astra-sim/custom_ring_allreduce_8npus_1MB", ""},
    {"astra-sim/onecomm_allreduce", ""},
    // No comm_size in the trace: inspected with a default (54 all-reduces x 1 MiB a rank).
    {"astra-sim/resnet_dp", "--default-comm-size 1MiB"},
    {"chakra-tests/feeder_tests_trace", ""},
    {"generated/chakra_generator/BROADCAST", ""},
    {"generated/pytorch/dlrm_8npus", ""},
    {"generated/stg/gpt_dp2_tp2_pp2", ""},
    {"generated/stg/llama_dp2_tp2_sp2", ""},
    {"generated/stg/llama_fsdp_dp4_tp2", ""},
    {"generated/stg/moe_dp2_ep4", ""},
    {"generated/text_converter/DLRM_HybridParallel_8npus_1pass", ""},
    {"generated/text_converter/MLP_ModelParallel_8npus_1pass", ""},
    {"generated/text_converter/Resnet50_DataParallel_4npus_2pass", ""},
    {"generated/text_converter/microAllToAll_4npus_1pass", ""},
};

// The golden figures of one rank, from `genie inspect --json`.
nlohmann::json RankFigures(const nlohmann::json& r) {
  nlohmann::json collectives = nlohmann::json::object();
  unsigned long long bytes = 0;
  for (const auto& [name, c] : r.at("collectives").items()) {
    collectives[name] = c.at("count");
    bytes += c.at("total_bytes").get<unsigned long long>();
  }
  return {{"nodes", r.at("nodes")},
          {"nodes_by_type", r.at("nodes_by_type")},
          {"collectives", collectives},
          {"collective_bytes", bytes},
          {"compute_ns", r.at("compute_ns")},
          {"cpu_ns", r.at("cpu_ns")},
          {"sends", r.at("sends")},
          {"recvs", r.at("recvs")},
          {"send_bytes", r.at("send_bytes")},
          {"cpu_collective_wrappers", r.at("cpu_collective_wrappers")}};
}

// What the golden file of `w` holds: the workload's rank count, and rank 0's and the last
// rank's figures.
nlohmann::json GoldenFigures(const GoldenWorkload& w, const nlohmann::json& inspect) {
  const auto& ranks = inspect.at("ranks");
  const size_t last = ranks.size() - 1;
  return {{"workload", std::string("traces/") + w.workload},
          {"inspect_args", w.args},
          {"ranks", inspect.at("workload").at("ranks")},
          {"runnable", inspect.at("runnable")},
          {"per_rank",
           {{"0", RankFigures(ranks.at(0))}, {std::to_string(last), RankFigures(ranks.at(last))}}}};
}

TEST(InspectE2eTest, GoldenFigures) {
  const char* update = std::getenv("GENIE_UPDATE_GOLDEN");
  const bool updating = update != nullptr && std::string(update) == "1";
  std::vector<std::string> written;
  for (const GoldenWorkload& w : kGolden) {
    SCOPED_TRACE(w.workload);
    const std::string path = Source(std::string("tests/golden/inspect/") + w.workload + ".json");
    const nlohmann::json inspect =
        InspectJson(std::string(w.args) + " " + kTraces + "/" + w.workload, 0);
    ASSERT_TRUE(inspect.contains("ranks") && !inspect["ranks"].empty()) << inspect.dump(1);
    const nlohmann::json actual = GoldenFigures(w, inspect);
    if (updating) {
      fs::create_directories(fs::path(path).parent_path());
      std::ofstream(path) << actual.dump(2) << "\n";
      written.push_back(path);
      continue;
    }
    const nlohmann::json expected = nlohmann::json::parse(ReadFile(path), nullptr, false);
    ASSERT_FALSE(expected.is_discarded())
        << path << " is missing or not JSON; GENIE_UPDATE_GOLDEN=1 writes it (see the header)";
    // The patch alone says what changed; both documents in full would bury it.
    EXPECT_TRUE(actual == expected) << path << " differs (JSON patch from golden to actual):\n"
                                    << nlohmann::json::diff(expected, actual).dump(1);
  }
  // Never passes while rewriting: a run that only wrote files has checked nothing.
  EXPECT_TRUE(written.empty()) << "GENIE_UPDATE_GOLDEN=1: wrote " << written.size()
                               << " golden files under " << Source("tests/golden/inspect")
                               << "; review the diff, then rerun without it";
}

TEST(InspectE2eTest, LlamaFsdpEveryRank) {
  // 8 ranks x 440 nodes: 332 COMP, 108 COMM_COLL = 64 all-gather + 40 reduce-scatter + 4
  // all-reduce.
  auto j = InspectJson(kTraces + "/generated/stg/llama_fsdp_dp4_tp2", 0);
  EXPECT_EQ(j["workload"]["comm_group"],
            kTraces + "/generated/stg/llama_fsdp_dp4_tp2/workload.json");
  ASSERT_EQ(j["ranks"].size(), 8u);
  for (const auto& r : j["ranks"]) {
    EXPECT_EQ(r["nodes"], 440);
    EXPECT_EQ(r["nodes_by_type"]["COMP_NODE"], 332);
    EXPECT_EQ(r["nodes_by_type"]["COMM_COLL_NODE"], 108);
    EXPECT_EQ(r["collectives"]["all_gather"]["count"], 64);
    EXPECT_EQ(r["collectives"]["reduce_scatter"]["count"], 40);
    EXPECT_EQ(r["collectives"]["all_reduce"]["count"], 4);
  }
  EXPECT_EQ(j["groups"]["1"], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(j["warnings"].size(), 0u);
  EXPECT_EQ(j["problems"].size(), 0u);
}

TEST(InspectE2eTest, ResnetDp54AllReducesPerRank) {
  auto j = InspectJson("--default-comm-size 4096 " + kTraces + "/astra-sim/resnet_dp", 0);
  ASSERT_EQ(j["ranks"].size(), 64u);
  for (const auto& r : j["ranks"]) {
    EXPECT_EQ(r["collectives"]["all_reduce"]["count"], 54);
    EXPECT_EQ(r["collectives"]["all_reduce"]["sizes"]["4096"], 54);
  }
}

TEST(InspectE2eTest, OnecommAllreduceUint64CommSizeReads65536) {
  auto j = InspectJson(kTraces + "/astra-sim/onecomm_allreduce", 0);
  for (int r = 0; r < 64; ++r) {
    EXPECT_EQ(j["ranks"][r]["collectives"]["all_reduce"]["sizes"]["65536"], 1) << "rank " << r;
  }
}

TEST(InspectE2eTest, DlrmIsRunnableWithTheSpecificWarnings) {
  CliResult text = RunGenie("inspect " + kTraces + "/generated/pytorch/dlrm_8npus", Stderr::kApart);
  EXPECT_EQ(text.exit_code, 0) << text.output << text.errors;
  EXPECT_NE(text.output.find("runnable: yes"), std::string::npos) << text.output;
  auto j = InspectJson(kTraces + "/generated/pytorch/dlrm_8npus", 0);
  ASSERT_EQ(j["warnings"].size(), 24u);  // three named warnings on each of the 8 ranks
  // ctrl_deps naming missing nodes per rank, from the independent decode.
  const int kMissing[] = {788, 709, 778, 790, 775, 788, 779, 782};
  for (int r = 0; r < 8; ++r) {
    const auto& w = j["ranks"][r]["warnings"];
    ASSERT_EQ(w.size(), 3u) << "rank " << r;
    EXPECT_EQ(w[0].get<std::string>().find("[ctrl-dep-missing]"), 0u);
    EXPECT_NE(w[0].get<std::string>().find("(rank " + std::to_string(r) +
                                           "): " + std::to_string(kMissing[r]) + " ctrl_deps"),
              std::string::npos)
        << w[0];
    EXPECT_EQ(w[1].get<std::string>().find("[ctrl-dep-cycle]"), 0u);
    EXPECT_EQ(w[2].get<std::string>().find("[cpu-collective-wrapper]"), 0u);
    EXPECT_NE(w[2].get<std::string>().find("[x16 nodes]"), std::string::npos) << w[2];
    EXPECT_FALSE(j["ranks"][r]["ctrl_deps_counted"].get<bool>());
  }
  // Rank 0's cycle: 1106 ctrl-depends on 1107, 1107 data-depends on 1106.
  EXPECT_NE(j["ranks"][0]["warnings"][1].get<std::string>().find("cycle: 1106 -> 1107 -> 1106"),
            std::string::npos)
      << j["ranks"][0]["warnings"][1];
}

TEST(InspectE2eTest, CtrlDepsOnAndOff) {
  auto on = InspectJson("--ctrl-deps on " + kTraces + "/generated/pytorch/dlrm_8npus", 1);
  ASSERT_EQ(on["problems"].size(), 8u);
  EXPECT_EQ(on["problems"][0].get<std::string>().find("[ctrl-dep-missing]"), 0u);
  auto off = InspectJson("--ctrl-deps off " + kTraces + "/chakra-tests/feeder_tests_trace", 0);
  ASSERT_EQ(off["warnings"].size(), 1u);
  EXPECT_EQ(off["warnings"][0].get<std::string>().find("[cpu-collective-wrapper]"), 0u);
  EXPECT_NE(RunGenie("inspect --ctrl-deps maybe " + kTraces + "/chakra-tests/feeder_tests_trace",
                     Stderr::kApart)
                .exit_code,
            0);
}

TEST(InspectE2eTest, FeederTraceIsRunnableWithTheSpecificWarnings) {
  auto j = InspectJson(kTraces + "/chakra-tests/feeder_tests_trace", 0);
  const auto& w = j["warnings"];
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].get<std::string>().find("[ctrl-dep-missing]"), 0u);
  EXPECT_NE(w[0].get<std::string>().find(": 1277 ctrl_deps name nodes"), std::string::npos);
  EXPECT_EQ(w[1].get<std::string>().find("[ctrl-dep-cycle]"), 0u);
  EXPECT_EQ(w[2].get<std::string>().find("[cpu-collective-wrapper]"), 0u);
  EXPECT_NE(w[2].get<std::string>().find("[x14 nodes]"), std::string::npos);
}

TEST(InspectE2eTest, ResnetDpIsMissingCommSizeUntilDefaulted) {
  CliResult r = RunGenie("inspect " + kTraces + "/astra-sim/resnet_dp", Stderr::kApart);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("runnable: NO, 64 problem(s)"), std::string::npos) << r.output;
  EXPECT_NE(
      r.output.find("[missing-comm-size] " + kTraces +
                    "/astra-sim/resnet_dp/Resnet50_DataParallel.0.et (rank 0): node 55 "
                    "'COMM_COLL_NODE_fc1000_ALLREDUCE': collective without comm_size; fix the "
                    "trace or pass --default-comm-size BYTES (and 53 more nodes on this rank)"),
      std::string::npos)
      << r.output;
  auto j =
      InspectJson("--default-comm-size 1MiB --workload " + kTraces + "/astra-sim/resnet_dp", 0);
  ASSERT_EQ(j["warnings"].size(), 64u);
  EXPECT_EQ(j["warnings"][0].get<std::string>().find("[default-comm-size]"), 0u);
  EXPECT_EQ(j["options"]["default_comm_size"], 1048576);
}

TEST(InspectE2eTest, OneCommSendNodeIsASendWithoutItsRecv) {
  CliResult r = RunGenie("inspect " + kTraces + "/generated/chakra_generator/one_comm_send_node",
                         Stderr::kApart);
  EXPECT_EQ(r.exit_code, 1);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(r.output.find("[send-without-recv] rank " + std::to_string(rank) + " node " +
                            std::to_string(56 + rank) + ": SEND without a destination"),
              std::string::npos)
        << r.output;
  }
  // The custom ring all-reduce has every SEND matched by a RECV.
  EXPECT_EQ(
      RunGenie("inspect " + kTraces + "/astra-sim/custom_ring_allreduce_8npus_1MB", Stderr::kApart)
          .exit_code,
      0);
}

class InspectTempTest : public ::testing::Test {
 protected:
  TempDir tmp_{"inspect-e2e"};
  fs::path dir_ = tmp_.path();
};

TEST_F(InspectTempTest, CollectiveMismatchAcrossRanks) {
  ASSERT_EQ(RunGenie("gen collective --type all_reduce --size 1MiB --ranks 4 --output " +
                         (dir_ / "a/w").string(),
                     Stderr::kApart)
                .exit_code,
            0);
  ASSERT_EQ(RunGenie("gen collective --type all_reduce --size 2MiB --ranks 4 --output " +
                         (dir_ / "b/w").string(),
                     Stderr::kApart)
                .exit_code,
            0);
  fs::copy_file(dir_ / "b/w.2.et", dir_ / "a/w.2.et", fs::copy_options::overwrite_existing);
  auto j = InspectJson((dir_ / "a").string(), 1);
  ASSERT_EQ(j["problems"].size(), 1u);
  EXPECT_EQ(j["problems"][0],
            "[collective-mismatch] world (ranks 0,1,2,3): collective #1 is all_reduce of 1048576 "
            "B (node 0) on rank 0 but all_reduce of 2097152 B (node 2) on rank 2; those ranks "
            "would hang");
}

TEST_F(InspectTempTest, SendRecvMismatch) {
  // The custom ring all-reduce with one rank replaced by another's trace: rank 3 now sends
  // to and receives from rank 2's neighbours, so SENDs and RECVs no longer pair up.
  for (int r = 0; r < 8; ++r) {
    std::string name = "custom_allreduce." + std::to_string(r) + ".et";
    fs::copy_file(kTraces + "/astra-sim/custom_ring_allreduce_8npus_1MB/" +
                      (r == 3 ? std::string("custom_allreduce.2.et") : name),
                  dir_ / name);
  }
  auto j = InspectJson(dir_.string(), 1);
  bool send = false, recv = false;
  for (const auto& p : j["problems"]) {
    send |= p.get<std::string>().find("[send-without-recv]") == 0;
    recv |= p.get<std::string>().find("[recv-without-send]") == 0;
  }
  EXPECT_TRUE(send && recv) << j["problems"].dump(1);
}

TEST_F(InspectTempTest, CommGroupProblemsAndExplicitFile) {
  std::ofstream(dir_ / "partial.json") << R"({"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]})";
  auto j = InspectJson("--comm-group " + (dir_ / "partial.json").string() + " " + kTraces +
                           "/generated/stg/llama_fsdp_dp4_tp2",
                       1);
  // Groups 3..6 undefined: warned, all ranks used (as ASTRA-sim does), so their members'
  // sequences no longer agree.
  ASSERT_EQ(j["warnings"].size(), 4u) << j["warnings"].dump(1);
  EXPECT_EQ(j["warnings"][0].get<std::string>().find("[unknown-group] rank 0 node"), 0u)
      << j["warnings"][0];
  ASSERT_GE(j["problems"].size(), 1u);
  EXPECT_EQ(j["problems"][0].get<std::string>().find("[collective-mismatch] group 3 (ranks "
                                                     "0,1,2,3,4,5,6,7)"),
            0u)
      << j["problems"][0];
  std::ofstream(dir_ / "wrong.json") << R"({"1": [0, 1], "2": [4, 5, 6, 7], "3": [0, 4],
      "4": [1, 5], "5": [2, 6], "6": [3, 7]})";
  j = InspectJson("--comm-group " + (dir_ / "wrong.json").string() + " " + kTraces +
                      "/generated/stg/llama_fsdp_dp4_tp2",
                  1);
  bool not_in_group = false;
  for (const auto& p : j["problems"]) {
    not_in_group |= p.get<std::string>().find("[not-in-group] rank 2 issues") == 0;
  }
  EXPECT_TRUE(not_in_group) << j["problems"].dump(1);
}

TEST_F(InspectTempTest, UnreadableRankAndBadArguments) {
  ASSERT_EQ(RunGenie("gen compute-chain --count 50 --duration 2us --ranks 3 --gzip --output " +
                         (dir_ / "c").string(),
                     Stderr::kApart)
                .exit_code,
            0);
  auto ok = InspectJson((dir_ / "c").string(), 0);
  EXPECT_EQ(ok["ranks"][2]["compute_ns"], 100'000);
  // Truncate rank 1: a problem naming the file and byte; the other ranks are still summarised.
  std::ofstream(dir_ / "c.1.et", std::ios::trunc | std::ios::binary) << std::string(
      "\x07\x0a\x05"
      "0.0.4\x40\x08",
      10);
  auto bad = InspectJson((dir_ / "c").string(), 1);
  ASSERT_EQ(bad["problems"].size(), 1u);
  EXPECT_NE(bad["problems"][0].get<std::string>().find((dir_ / "c.1.et").string() + ": byte 8"),
            std::string::npos)
      << bad["problems"][0];
  EXPECT_NE(bad["problems"][0].get<std::string>().find("truncated"), std::string::npos);
  EXPECT_EQ(bad["ranks"][2]["nodes"], 50);

  CliResult missing = RunGenie("inspect " + (dir_ / "nothing").string(), Stderr::kApart);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.errors.find("no files"), std::string::npos) << missing.errors;
  CliResult many = RunGenie("inspect " + kTraces + "/generated/chakra_generator", Stderr::kApart);
  EXPECT_EQ(many.exit_code, 2);
  EXPECT_NE(many.errors.find("holds 14 trace families"), std::string::npos) << many.errors;
  EXPECT_EQ(RunGenie("inspect", Stderr::kApart).exit_code, 2);
}

}  // namespace
}  // namespace genie::testing
