// `genie inspect` end to end on the shipped workloads. The expected figures were decoded
// independently of genie's reader, by src/genie/trace/decode_et.py (a raw protobuf-wire
// decoder in Python): `python3 src/genie/trace/decode_et.py <file>` prints them per rank.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace fs = std::filesystem;
const std::string kGenie = std::string(GENIE_BINARY_DIR) + "/tools/genie/genie";
const std::string kTraces = std::string(GENIE_DATA_DIR) + "/traces";

struct CmdResult {
  int exit_code = -1;
  std::string out, err;
};

CmdResult Genie(const std::string& args) {
  std::string err_file =
      (fs::temp_directory_path() / ("genie_inspect_e2e_err_" + std::to_string(::getpid())))
          .string();
  std::string cmd = kGenie + " " + args + " 2>" + err_file;
  CmdResult run;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return run;
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) run.out.append(buf, n);
  int status = ::pclose(p);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  run.err.assign(std::istreambuf_iterator<char>(in), {});
  fs::remove(err_file);
  return run;
}

nlohmann::json InspectJson(const std::string& args, int expect_exit) {
  CmdResult r = Genie("inspect --json " + args);
  EXPECT_EQ(r.exit_code, expect_exit) << args << "\n" << r.out.substr(0, 3000) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 2000) << r.err;
  return j;
}

struct Expect {
  std::string workload;
  int ranks;
  int rank;
  uint64_t nodes;
  std::map<std::string, uint64_t> by_type;
  std::map<std::string, uint64_t> collectives;
  unsigned long long coll_bytes;
  long long gpu_compute_us;
  long long cpu_us;
  uint64_t sends, recvs;
  unsigned long long send_bytes;
  uint64_t cpu_wrappers;
};

// workload, ranks, rank, nodes, nodes by type, collectives by type, collective bytes,
// GPU compute us, CPU us (CPU COMP nodes + CPU-side collective wrappers), sends, recvs,
// send bytes, CPU-side collective wrappers. Rank 0 and the last rank of 15 workloads.
const Expect kExpected[] = {
    {"astra-sim/microbenchmarks/all_gather/16npus_1MB",
     16,
     0,
     1,
     {{"COMM_COLL_NODE", 1}},
     {{"all_gather", 1}},
     1048576ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"astra-sim/microbenchmarks/all_gather/16npus_1MB",
     16,
     15,
     1,
     {{"COMM_COLL_NODE", 1}},
     {{"all_gather", 1}},
     1048576ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"astra-sim/custom_ring_allreduce_8npus_1MB",
     8,
     0,
     35,
     {{"COMM_RECV_NODE", 14}, {"COMM_SEND_NODE", 14}, {"COMP_NODE", 7}},
     {},
     0ull,
     49ll,
     0ll,
     14,
     14,
     1835008ull,
     0},
    {"astra-sim/custom_ring_allreduce_8npus_1MB",
     8,
     7,
     35,
     {{"COMM_RECV_NODE", 14}, {"COMM_SEND_NODE", 14}, {"COMP_NODE", 7}},
     {},
     0ull,
     49ll,
     0ll,
     14,
     14,
     1835008ull,
     0},
    {"astra-sim/onecomm_allreduce",
     64,
     0,
     1,
     {{"COMM_COLL_NODE", 1}},
     {{"all_reduce", 1}},
     65536ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"astra-sim/onecomm_allreduce",
     64,
     63,
     1,
     {{"COMM_COLL_NODE", 1}},
     {{"all_reduce", 1}},
     65536ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"astra-sim/resnet_dp",
     64,
     0,
     215,
     {{"COMM_COLL_NODE", 54}, {"COMP_NODE", 161}},
     {{"all_reduce", 54}},
     0ull,
     1082450ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"astra-sim/resnet_dp",
     64,
     63,
     215,
     {{"COMM_COLL_NODE", 54}, {"COMP_NODE", 161}},
     {{"all_reduce", 54}},
     0ull,
     1082450ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"chakra-tests/feeder_tests_trace",
     1,
     0,
     3664,
     {{"COMM_COLL_NODE", 21}, {"COMP_NODE", 3643}},
     {{"all_reduce", 5}, {"broadcast", 2}},
     102441032ull,
     292828ll,
     52252ll,
     0,
     0,
     0ull,
     14},
    {"generated/chakra_generator/BROADCAST",
     4,
     0,
     1,
     {{"COMM_COLL_NODE", 1}},
     {{"broadcast", 1}},
     65536ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/chakra_generator/BROADCAST",
     4,
     3,
     1,
     {{"COMM_COLL_NODE", 1}},
     {{"broadcast", 1}},
     65536ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/pytorch/dlrm_8npus",
     8,
     0,
     1131,
     {{"COMM_COLL_NODE", 24}, {"COMP_NODE", 1107}},
     {{"all_reduce", 3}, {"all_to_all", 5}},
     2549700ull,
     916ll,
     8743ll,
     0,
     0,
     0ull,
     16},
    {"generated/pytorch/dlrm_8npus",
     8,
     7,
     1133,
     {{"COMM_COLL_NODE", 24}, {"COMP_NODE", 1109}},
     {{"all_reduce", 3}, {"all_to_all", 5}},
     2549700ull,
     924ll,
     6710ll,
     0,
     0,
     0ull,
     16},
    {"generated/stg/gpt_dp2_tp2_pp2",
     8,
     0,
     178,
     {{"COMM_COLL_NODE", 46}, {"COMM_RECV_NODE", 2}, {"COMM_SEND_NODE", 2}, {"COMP_NODE", 128}},
     {{"all_gather", 24}, {"all_reduce", 6}, {"reduce_scatter", 16}},
     120061952ull,
     0ll,
     0ll,
     2,
     2,
     1048576ull,
     0},
    {"generated/stg/gpt_dp2_tp2_pp2",
     8,
     7,
     182,
     {{"COMM_COLL_NODE", 46}, {"COMM_RECV_NODE", 2}, {"COMM_SEND_NODE", 2}, {"COMP_NODE", 132}},
     {{"all_gather", 24}, {"all_reduce", 6}, {"reduce_scatter", 16}},
     120061952ull,
     0ll,
     0ll,
     2,
     2,
     1048576ull,
     0},
    {"generated/stg/llama_dp2_tp2_sp2",
     8,
     0,
     466,
     {{"COMM_COLL_NODE", 134}, {"COMP_NODE", 332}},
     {{"all_gather", 64}, {"all_reduce", 22}, {"reduce_scatter", 48}},
     357040128ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/stg/llama_dp2_tp2_sp2",
     8,
     7,
     466,
     {{"COMM_COLL_NODE", 134}, {"COMP_NODE", 332}},
     {{"all_gather", 64}, {"all_reduce", 22}, {"reduce_scatter", 48}},
     357040128ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/stg/llama_fsdp_dp4_tp2",
     8,
     0,
     440,
     {{"COMM_COLL_NODE", 108}, {"COMP_NODE", 332}},
     {{"all_gather", 64}, {"all_reduce", 4}, {"reduce_scatter", 40}},
     251658240ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/stg/llama_fsdp_dp4_tp2",
     8,
     7,
     440,
     {{"COMM_COLL_NODE", 108}, {"COMP_NODE", 332}},
     {{"all_gather", 64}, {"all_reduce", 4}, {"reduce_scatter", 40}},
     251658240ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/stg/moe_dp2_ep4",
     8,
     0,
     302,
     {{"COMM_COLL_NODE", 34}, {"COMP_NODE", 268}},
     {{"all_gather", 12}, {"all_reduce", 6}, {"all_to_all", 16}},
     164106240ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/stg/moe_dp2_ep4",
     8,
     7,
     302,
     {{"COMM_COLL_NODE", 34}, {"COMP_NODE", 268}},
     {{"all_gather", 12}, {"all_reduce", 6}, {"all_to_all", 16}},
     164106240ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/text_converter/DLRM_HybridParallel_8npus_1pass",
     8,
     0,
     32,
     {{"COMM_COLL_NODE", 9}, {"COMP_NODE", 23}},
     {{"all_reduce", 7}, {"all_to_all", 2}},
     3388416ull,
     51378ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/text_converter/DLRM_HybridParallel_8npus_1pass",
     8,
     7,
     32,
     {{"COMM_COLL_NODE", 9}, {"COMP_NODE", 23}},
     {{"all_reduce", 7}, {"all_to_all", 2}},
     3388416ull,
     51378ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/text_converter/MLP_ModelParallel_8npus_1pass",
     8,
     0,
     29,
     {{"COMM_COLL_NODE", 11}, {"COMP_NODE", 18}},
     {{"all_gather", 6}, {"all_reduce", 5}},
     856832ull,
     195206ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/text_converter/MLP_ModelParallel_8npus_1pass",
     8,
     7,
     29,
     {{"COMM_COLL_NODE", 11}, {"COMP_NODE", 18}},
     {{"all_gather", 6}, {"all_reduce", 5}},
     856832ull,
     195206ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/text_converter/Resnet50_DataParallel_4npus_2pass",
     4,
     0,
     430,
     {{"COMM_COLL_NODE", 108}, {"COMP_NODE", 322}},
     {{"all_reduce", 108}},
     204023296ull,
     2164900ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/text_converter/Resnet50_DataParallel_4npus_2pass",
     4,
     3,
     430,
     {{"COMM_COLL_NODE", 108}, {"COMP_NODE", 322}},
     {{"all_reduce", 108}},
     204023296ull,
     2164900ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/text_converter/microAllToAll_4npus_1pass",
     4,
     0,
     1,
     {{"COMM_COLL_NODE", 1}},
     {{"all_to_all", 1}},
     1048576ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
    {"generated/text_converter/microAllToAll_4npus_1pass",
     4,
     3,
     1,
     {{"COMM_COLL_NODE", 1}},
     {{"all_to_all", 1}},
     1048576ull,
     0ll,
     0ll,
     0,
     0,
     0ull,
     0},
};

TEST(InspectE2eTest, ExactCountsForShippedWorkloads) {
  std::map<std::string, nlohmann::json> cache;
  for (const Expect& e : kExpected) {
    SCOPED_TRACE(e.workload + " rank " + std::to_string(e.rank));
    bool resnet = e.workload == "astra-sim/resnet_dp";
    if (!cache.count(e.workload)) {
      // resnet_dp has no comm_size: inspect it with a default (checked separately below).
      cache[e.workload] =
          InspectJson((resnet ? "--default-comm-size 1MiB " : "") + kTraces + "/" + e.workload, 0);
    }
    const auto& j = cache[e.workload];
    ASSERT_TRUE(j.contains("ranks"));
    EXPECT_EQ(j["workload"]["ranks"], e.ranks);
    EXPECT_TRUE(j["runnable"].get<bool>()) << j["problems"].dump(1);
    const auto& r = j["ranks"][static_cast<size_t>(e.rank)];
    EXPECT_EQ(r["rank"], e.rank);
    EXPECT_EQ(r["nodes"].get<uint64_t>(), e.nodes);
    auto by_type = r["nodes_by_type"].get<std::map<std::string, uint64_t>>();
    EXPECT_EQ(by_type, e.by_type);
    std::map<std::string, uint64_t> colls;
    unsigned long long bytes = 0;
    for (const auto& [name, c] : r["collectives"].items()) {
      colls[name] = c["count"].get<uint64_t>();
      bytes += c["total_bytes"].get<unsigned long long>();
    }
    EXPECT_EQ(colls, e.collectives);
    EXPECT_EQ(bytes, resnet ? 54ull * 1048576 : e.coll_bytes);  // resnet: 54 at the default
    EXPECT_EQ(r["compute_ns"].get<long long>(), e.gpu_compute_us * 1000);
    EXPECT_EQ(r["cpu_ns"].get<long long>(), e.cpu_us * 1000);
    EXPECT_EQ(r["sends"].get<uint64_t>(), e.sends);
    EXPECT_EQ(r["recvs"].get<uint64_t>(), e.recvs);
    EXPECT_EQ(r["send_bytes"].get<unsigned long long>(), e.send_bytes);
    EXPECT_EQ(r["cpu_collective_wrappers"].get<uint64_t>(), e.cpu_wrappers);
  }
  EXPECT_EQ(cache.size(), 15u);
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
  CmdResult text = Genie("inspect " + kTraces + "/generated/pytorch/dlrm_8npus");
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("runnable: yes"), std::string::npos) << text.out;
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
  EXPECT_NE(
      Genie("inspect --ctrl-deps maybe " + kTraces + "/chakra-tests/feeder_tests_trace").exit_code,
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
  CmdResult r = Genie("inspect " + kTraces + "/astra-sim/resnet_dp");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("runnable: NO, 64 problem(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[missing-comm-size] " + kTraces +
                       "/astra-sim/resnet_dp/Resnet50_DataParallel.0.et (rank 0): node 55 "
                       "'COMM_COLL_NODE_fc1000_ALLREDUCE': collective without comm_size; fix the "
                       "trace or pass --default-comm-size BYTES (and 53 more nodes on this rank)"),
            std::string::npos)
      << r.out;
  auto j =
      InspectJson("--default-comm-size 1MiB --workload " + kTraces + "/astra-sim/resnet_dp", 0);
  ASSERT_EQ(j["warnings"].size(), 64u);
  EXPECT_EQ(j["warnings"][0].get<std::string>().find("[default-comm-size]"), 0u);
  EXPECT_EQ(j["options"]["default_comm_size"], 1048576);
}

TEST(InspectE2eTest, OneCommSendNodeIsASendWithoutItsRecv) {
  CmdResult r = Genie("inspect " + kTraces + "/generated/chakra_generator/one_comm_send_node");
  EXPECT_EQ(r.exit_code, 1);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(r.out.find("[send-without-recv] rank " + std::to_string(rank) + " node " +
                         std::to_string(56 + rank) + ": SEND without a destination"),
              std::string::npos)
        << r.out;
  }
  // The custom ring all-reduce has every SEND matched by a RECV.
  EXPECT_EQ(Genie("inspect " + kTraces + "/astra-sim/custom_ring_allreduce_8npus_1MB").exit_code,
            0);
}

class InspectTempTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("genie_inspect_e2e_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(InspectTempTest, CollectiveMismatchAcrossRanks) {
  ASSERT_EQ(Genie("gen collective --type all_reduce --size 1MiB --ranks 4 --output " +
                  (dir_ / "a/w").string())
                .exit_code,
            0);
  ASSERT_EQ(Genie("gen collective --type all_reduce --size 2MiB --ranks 4 --output " +
                  (dir_ / "b/w").string())
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
  ASSERT_EQ(Genie("gen compute-chain --count 50 --duration 2us --ranks 3 --gzip --output " +
                  (dir_ / "c").string())
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

  CmdResult missing = Genie("inspect " + (dir_ / "nothing").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no files"), std::string::npos) << missing.err;
  CmdResult many = Genie("inspect " + kTraces + "/generated/chakra_generator");
  EXPECT_EQ(many.exit_code, 2);
  EXPECT_NE(many.err.find("holds 14 trace families"), std::string::npos) << many.err;
  EXPECT_EQ(Genie("inspect").exit_code, 2);
}

}  // namespace
