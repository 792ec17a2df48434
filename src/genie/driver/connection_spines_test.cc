// Connection spines (connection_spines.h) without a testbed: the ranks' "connections" records
// read back as flows (each rank's sending side, keyed by its rank, peer and channel), from a
// run's merged records and from a job folder's rank streams.
#include "genie/driver/connection_spines.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace genie::driver {
namespace {

nlohmann::json Record(int rank, int peer, int channel, const std::string& local,
                      const std::string& remote) {
  return {{"record", "connections"},
          {"rank", rank},
          {"connections",
           {{{"peer", peer}, {"channel", channel}, {"local", local}, {"remote", remote}}}}};
}

TEST(ConnectionSpinesTest, RecordsBecomeEachRanksSendingFlows) {
  nlohmann::json records = nlohmann::json::array();
  records.push_back(Record(0, 2, 1, "10.100.0.1:5000", "10.100.1.1:41000"));
  records.push_back(Record(2, 0, 1, "10.100.1.1:41000", "10.100.0.1:5000"));
  records.push_back({{"rank", 3}});                              // no connections: skipped
  records.push_back(Record(1, 3, 0, "10.100.0.2:5001", "x"));    // kept: the query judges it
  records.back()["connections"].push_back({{"peer", "three"}});  // mistyped: skipped
  const std::vector<testbed::ConnectionFlow> flows = RecordedFlows(records);
  ASSERT_EQ(flows.size(), 3u);
  EXPECT_EQ(flows[0].src, 0);
  EXPECT_EQ(flows[0].dst, 2);
  EXPECT_EQ(flows[0].channel, 1);
  EXPECT_EQ(flows[0].local, "10.100.0.1:5000");
  EXPECT_EQ(flows[0].remote, "10.100.1.1:41000");
  EXPECT_EQ(flows[1].src, 2);
  EXPECT_EQ(flows[1].dst, 0);
  EXPECT_EQ(flows[2].remote, "x");
  EXPECT_TRUE(RecordedFlows(nlohmann::json::object()).empty());
  // Not a testbed hashing ports: nothing asked, nothing said.
  std::string note;
  EXPECT_TRUE(ConnectionSpines("", records, &note).empty());
  EXPECT_TRUE(note.empty());
}

TEST(ConnectionSpinesTest, AJobFoldersRankStreamsGiveTheirConnectionsRecords) {
  genie::testing::TempDir dir("connection_spines");
  for (int r = 0; r < 2; ++r) {
    std::ofstream out(dir.path() + "/rank-" + std::to_string(r) + ".jsonl");
    out << R"({"record":"header","format":"genie-record","version":1,"run":{"rank":)" << r
        << "}}\n";
    out << Record(r, 1 - r, 0, "10.100.0.1:5000", "10.100.1.1:4100" + std::to_string(r)).dump()
        << "\n";
    out << R"({"record":"op")";  // a running job's stream: its last line still being written
  }
  std::ofstream(dir.path() + "/results.json") << "{}";
  const nlohmann::json records = ConnectionRecordsIn(dir.path());
  ASSERT_EQ(records.size(), 2u);
  const std::vector<testbed::ConnectionFlow> flows = RecordedFlows(records);
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0].src + flows[1].src, 1);
  EXPECT_TRUE(ConnectionRecordsIn(dir.path() + "/missing").empty());
}

}  // namespace
}  // namespace genie::driver
