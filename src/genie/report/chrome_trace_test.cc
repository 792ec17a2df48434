#include "genie/report/chrome_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "tests/support/temp_dir.h"

namespace genie::report {
namespace {

using ::genie::testing::TempDir;

using nlohmann::json;
using record::OpEvent;

OpEvent Ev(int rank, NodeId node, OpKind kind, TimeNs start, TimeNs end, bool cpu = false) {
  OpEvent e;
  e.rank = rank;
  e.node = node;
  e.name = "n" + std::to_string(node);
  e.kind = kind;
  e.is_cpu_op = cpu;
  e.start = start;
  e.end = end;
  if (e.is_comm()) {
    e.size = 1048576;
    e.group_size = 2;
    e.algorithm = "ring";
  }
  return e;
}

std::vector<OpEvent> TwoRanks() {
  std::vector<OpEvent> v = {
      Ev(0, 1, OpKind::kCompute, 0, 1500),
      Ev(0, 2, OpKind::kCompute, 100, 200, /*cpu=*/true),
      Ev(0, 3, OpKind::kCollective, 1500, 66440),
      Ev(0, 4, OpKind::kRecv, 2000, 5000),
      Ev(0, 5, OpKind::kRecv, 3000, 7001),  // overlaps node 4: second recv lane
      Ev(0, 6, OpKind::kRecv, 6000, 8000),  // lane 0 is free again at 5000
      Ev(0, 7, OpKind::kMetadata, 0, 0),    // takes no time: left out
      Ev(0, 8, OpKind::kMemLoad, 10, 20),
      Ev(1, 1, OpKind::kCompute, 0, 1),
      Ev(1, 9, OpKind::kSend, 1, 66441),
  };
  v[4].peer = 1;
  v[9].peer = 0;
  return v;
}

TEST(ChromeTraceTest, EveryEventHasTheRequiredFields) {
  json doc = BuildChromeTrace(TwoRanks());
  ASSERT_TRUE(doc.contains("traceEvents"));
  const json& events = doc["traceEvents"];
  int slices = 0;
  for (const json& e : events) {
    SCOPED_TRACE(e.dump());
    ASSERT_TRUE(e.contains("ph"));
    ASSERT_TRUE(e["ph"].is_string());
    ASSERT_TRUE(e.contains("ts"));
    ASSERT_TRUE(e["ts"].is_number());
    ASSERT_TRUE(e.contains("pid"));
    ASSERT_TRUE(e["pid"].is_number_integer());
    ASSERT_TRUE(e.contains("tid"));
    ASSERT_TRUE(e["tid"].is_number_integer());
    ASSERT_TRUE(e.contains("name"));
    ASSERT_TRUE(e["name"].is_string());
    std::string ph = e["ph"];
    ASSERT_TRUE(ph == "X" || ph == "M") << ph;
    if (ph == "X") {
      ++slices;
      ASSERT_TRUE(e.contains("dur"));
      ASSERT_TRUE(e["dur"].is_number());
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(slices, 9);  // every op but the METADATA node
}

TEST(ChromeTraceTest, ProcessesTracksAndTimesFieldByField) {
  json doc = BuildChromeTrace(TwoRanks());
  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<int, std::string> process_names;
  std::map<std::string, json> by_name;  // X events by op name ("n<node>", rank 0 only)
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      process_names[e["pid"]] = e["args"]["name"];
    } else if (e["ph"] == "M" && e["name"] == "thread_name") {
      thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
    } else if (e["ph"] == "X" && e["pid"] == 0) {
      by_name[e["name"]] = e;
    }
  }
  EXPECT_EQ(process_names, (std::map<int, std::string>{{0, "rank 0"}, {1, "rank 1"}}));
  std::map<std::pair<int, int>, std::string> expected_threads = {
      {{0, 100}, "GPU compute"}, {{0, 200}, "CPU"},     {{0, 300}, "communication"},
      {{0, 400}, "recv"},        {{0, 401}, "recv #2"}, {{0, 500}, "memory"},
      {{1, 100}, "GPU compute"}, {{1, 300}, "communication"}};
  EXPECT_EQ(thread_names, expected_threads);

  const json& coll = by_name.at("n3");
  EXPECT_EQ(coll["tid"], 300);
  EXPECT_DOUBLE_EQ(coll["ts"].get<double>(), 1.5);  // µs
  EXPECT_DOUBLE_EQ(coll["dur"].get<double>(), 64.94);
  EXPECT_EQ(coll["cat"], "all_reduce");
  EXPECT_EQ(coll["args"]["node"], 3);
  EXPECT_EQ(coll["args"]["size"], 1048576);
  EXPECT_EQ(coll["args"]["algorithm"], "ring");
  EXPECT_DOUBLE_EQ(coll["args"]["algbw_gbps"].get<double>(), 1048576.0 / 64940.0);

  EXPECT_EQ(by_name.at("n1")["tid"], 100);
  EXPECT_DOUBLE_EQ(by_name.at("n1")["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(by_name.at("n1")["dur"].get<double>(), 1.5);
  EXPECT_EQ(by_name.at("n2")["tid"], 200);
  EXPECT_EQ(by_name.at("n4")["tid"], 400);
  EXPECT_EQ(by_name.at("n5")["tid"], 401);
  EXPECT_DOUBLE_EQ(by_name.at("n5")["dur"].get<double>(), 4.001);
  EXPECT_EQ(by_name.at("n5")["args"]["peer"], 1);
  EXPECT_EQ(by_name.at("n6")["tid"], 400);
  EXPECT_EQ(by_name.at("n8")["tid"], 500);
  EXPECT_EQ(by_name.at("n8")["cat"], "mem_load");
  EXPECT_EQ(by_name.count("n7"), 0u);
}

TEST(ChromeTraceTest, NoTwoSlicesOnOneThreadOverlap) {
  json doc = BuildChromeTrace(TwoRanks());
  std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>> lanes;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    // In integer ns, as Perfetto reads them (llround(µs × 1000)).
    int64_t ts = std::llround(e["ts"].get<double>() * 1000);
    int64_t dur = std::llround(e["dur"].get<double>() * 1000);
    lanes[{e["pid"], e["tid"]}].push_back({ts, ts + dur});
  }
  for (auto& [key, v] : lanes) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i - 1].second, v[i].first);
  }
}

TEST(ChromeTraceTest, FileIsValidJsonEqualToTheBuiltDocument) {
  const TempDir tmp("chrome-trace");
  const std::filesystem::path dir = tmp.path();
  std::string path = (dir / "trace.json").string();
  ASSERT_TRUE(WriteChromeTrace(path, TwoRanks()).ok());
  std::ifstream in(path);
  json read = json::parse(in);
  EXPECT_EQ(read, BuildChromeTrace(TwoRanks()));

  Status bad = WriteChromeTrace("/nonexistent-dir/t.json", TwoRanks());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("/nonexistent-dir/t.json"), std::string::npos);
}

}  // namespace
}  // namespace genie::report
