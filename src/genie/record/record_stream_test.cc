// Reading streams that are damaged, skeletal or not genie's at all: every case is an error
// naming the file, the line and the field — never an exception or a crash.
#include "genie/record/record_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "genie/record/event_json.h"

namespace genie::record {
namespace {

const std::string kHeader =
    "{\"record\":\"header\",\"format\":\"genie-record\",\"version\":1,\"run\":{\"rank\":0,"
    "\"world_size\":2}}\n";

struct Bad {
  std::string text;
  std::vector<std::string> message_has;
};

TEST(RecordStreamRobustnessTest, WrongTypesAndShapesAreErrorsNamingLineAndField) {
  const std::vector<Bad> cases = {
      {"{\"record\":5}\n", {"s.jsonl: line 1", "\"record\"", "should be a string"}},
      {"{\"record\":\"header\",\"format\":7}\n", {"line 1", "\"format\""}},
      {"{\"record\":\"header\",\"format\":\"genie-record\",\"run\":[1]}\n",
       {"line 1", "\"run\"", "should be an object"}},
      {kHeader + "{\"record\":\"op\",\"kind\":\"compute\",\"rank\":0,\"start\":\"soon\"}\n",
       {"line 2", "\"start\""}},
      {kHeader + "{\"record\":\"op\",\"kind\":\"compute\"}\n", {"line 2", "\"rank\" is missing"}},
      {kHeader + "{\"record\":\"op\",\"kind\":\"compute\",\"rank\":-4}\n",
       {"line 2", "\"rank\" is -4"}},
      {kHeader + "{\"record\":\"rank\",\"rank\":0,\"iteration\":0,\"start\":9,\"finish\":3}\n",
       {"line 2", "finishes (3) before it starts (9)"}},
      {kHeader + "{\"record\":\"rank\",\"rank\":0}\n", {"line 2", "\"iteration\" is missing"}},
      {kHeader + "{\"record\":\"clock\",\"run_id\":12}\n", {"line 2", "\"run_id\""}},
      {kHeader + "{\"record\":\"clock\",\"offset_ns\":\"-5\"}\n", {"line 2", "\"offset_ns\""}},
      {kHeader + "{\"record\":\"traffic\",\"peers\":[{\"network_bytes_sent\":-1}]}\n",
       {"line 2", "peers[0]", "\"network_bytes_sent\""}},
      {kHeader + "{\"record\":\"traffic\",\"peers\":7}\n", {"line 2", "\"peers\""}},
      {kHeader + "{\"record\":\"op\",\"kind\":\"collective\",\"rank\":0,\"phases\":7}\n",
       {"line 2", "\"phases\"", "array"}},
      {kHeader + "{\"record\":\"op\",\"kind\":\"collective\",\"rank\":0,\"phases\":[{\"chunk\":0,"
                 "\"dim\":1,\"op\":\"no_such\"}]}\n",
       {"line 2", "\"phases\"", "entry 0"}},
      {kHeader + kHeader, {"line 2", "header after other records"}},
      {"[1,2,3]\n", {"line 1", "should be a JSON object, found an array"}},
      {"\"text\"\n{\"record\":\"op\"}\n", {"line 1"}},
      {"{\"record\":\"header\",\"format\":\"genie-record\",\"run\":{\"world_size\":\"2\"}}\n",
       {"line 1", "\"world_size\""}},
      {"{\"record\":\"header\",\"format\":\"genie-record\",\"run\":{\"rank\":5,"
       "\"world_size\":2}}\n",
       {"line 1", "\"rank\" is 5"}},
      {std::string(100000, '[') + std::string(100000, ']') + "\n" + kHeader,
       {"line 1", "nested more than"}},
  };
  for (const Bad& c : cases) {
    Result<RecordStream> s = Status::Internal("not run");
    ASSERT_NO_THROW(s = ParseRecordStream(c.text, "s.jsonl")) << c.text.substr(0, 200);
    ASSERT_FALSE(s.ok()) << c.text.substr(0, 200);
    for (const std::string& part : c.message_has) {
      EXPECT_NE(s.status().message().find(part), std::string::npos)
          << "wanted \"" << part << "\" in: " << s.status().message();
    }
    EXPECT_NE(s.status().message().find("s.jsonl"), std::string::npos) << s.status().message();
  }
}

TEST(RecordStreamRobustnessTest, EmptyAndHeaderOnlyStreamsReadAsNoRecords) {
  for (const std::string& text : {std::string(), kHeader, std::string("\n\n")}) {
    Result<RecordStream> s = Status::Internal("not run");
    ASSERT_NO_THROW(s = ParseRecordStream(text, "s.jsonl"));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_TRUE(s->ops.empty());
    EXPECT_TRUE(s->ranks.empty());
  }
}

}  // namespace
}  // namespace genie::record

namespace genie::record {
namespace {

// A multi-dimensional collective's phases survive the stream (a simulation's results.json is
// written from it).
TEST(RecordStreamTest, PhasesReadBack) {
  OpEvent e;
  e.kind = OpKind::kCollective;
  e.rank = 3;
  e.start = 5;
  e.end = 90;
  e.phases = {{2, 1, CollectiveType::kReduceScatter, 5, 40},
              {2, 0, CollectiveType::kAllGather, 40, 90}};
  std::string line;
  AppendOpRecord(e, &line);
  auto back = OpEventFromJson(nlohmann::json::parse(line), "x");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ToJson(*back), ToJson(e));
  ASSERT_EQ(back->phases.size(), 2u);
  EXPECT_EQ(back->phases[1].op, CollectiveType::kAllGather);
  EXPECT_EQ(back->phases[0].dim, 1);
}

TEST(RecordStream, RankRecordParsesBackToItsSummary) {
  RankSummary s;
  s.rank = 3;
  s.iteration = -1;
  s.start = 12;
  s.finish = 9'000'000'000'000;
  s.compute_ns = 5;
  s.comm_ns = 6;
  s.exposed_comm_ns = 7;
  std::string line;
  AppendRankRecord(s, &line);
  nlohmann::json want = ToJson(s);
  want["record"] = "rank";
  EXPECT_EQ(nlohmann::json::parse(line), want);
  EXPECT_FALSE(want.contains("compute_excess_ns"));  // written under compute faults only
  EXPECT_FALSE(want.contains("stall_ns"));
}

// A rank record carries its host's retransmission timeouts and namespace when it counted some,
// and reads back with them; a negative count is refused.
TEST(RecordStream, RetransmissionTimeoutsReadBack) {
  RankSummary s;
  s.rank = 2;
  s.iteration = 4;
  s.finish = 100;
  s.tcp_timeouts = 3;
  s.host_id = 4026532000;
  std::string text = "{\"record\":\"header\",\"format\":\"genie-record\",\"version\":1}\n";
  AppendRankRecord(s, &text);
  EXPECT_EQ(nlohmann::json::parse(text.substr(text.find('\n') + 1))["tcp_timeouts"], 3);
  auto stream = ParseRecordStream(text, "s.jsonl");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  ASSERT_EQ(stream->ranks.size(), 1u);
  EXPECT_EQ(stream->ranks[0].tcp_timeouts, 3);
  EXPECT_EQ(stream->ranks[0].host_id, 4026532000);
  auto bad = ParseRecordStream(
      "{\"record\":\"rank\",\"rank\":0,\"iteration\":0,\"tcp_timeouts\":-1}\n", "s.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("tcp_timeouts"), std::string::npos)
      << bad.status().message();
}

// A rank record carries its connections' bbr PROBE_RTT when they had some, and reads back with
// it; a record without keeps "none" (-1 for when); a negative count is refused.
TEST(RecordStream, ProbeRttReadsBack) {
  RankSummary s;
  s.rank = 1;
  s.iteration = 3;
  s.finish = 100;
  s.probe_rtt_episodes = 2;
  s.probe_rtt_ns = 400'000'000;
  s.probe_rtt_at_ns = 1'900'000'000;
  std::string text = "{\"record\":\"header\",\"format\":\"genie-record\",\"version\":1}\n";
  AppendRankRecord(s, &text);
  text += "\n";
  RankSummary quiet;
  quiet.rank = 2;
  AppendRankRecord(quiet, &text);
  text += "\n";
  EXPECT_EQ(text.find("probe_rtt", text.rfind("\"rank\":2")), std::string::npos);
  auto stream = ParseRecordStream(text, "s.jsonl");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  ASSERT_EQ(stream->ranks.size(), 2u);
  EXPECT_EQ(stream->ranks[0].probe_rtt_episodes, 2);
  EXPECT_EQ(stream->ranks[0].probe_rtt_ns, 400'000'000);
  EXPECT_EQ(stream->ranks[0].probe_rtt_at_ns, 1'900'000'000);
  EXPECT_EQ(stream->ranks[1].probe_rtt_at_ns, -1);
  auto bad = ParseRecordStream(
      "{\"record\":\"rank\",\"rank\":0,\"iteration\":0,\"probe_rtt_episodes\":-1}\n", "s.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("probe_rtt_episodes"), std::string::npos);
}

// Under compute faults a rank record carries its excess and stall, and reads back with them.
TEST(RecordStream, ComputeFaultFiguresAndEventsReadBack) {
  RankSummary s;
  s.rank = 1;
  s.iteration = 2;
  s.finish = 100;
  s.compute_ns = 60;
  s.compute_excess_ns = -20;
  s.stall_ns = 30;
  std::string text = "{\"record\":\"header\",\"format\":\"genie-record\",\"version\":1}\n";
  AppendRankRecord(s, &text);
  text += "\n{\"record\":\"compute_faults\",\"rank\":1,\"events\":[{\"fault\":\"rank 1: "
          "compute 0.5x from iteration 2\",\"entry\":1,\"rank\":1,\"action\":\"apply\","
          "\"iteration\":2,\"at_ns\":0}]}\n";
  auto stream = ParseRecordStream(text, "s.jsonl");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  ASSERT_EQ(stream->ranks.size(), 1u);
  EXPECT_EQ(stream->ranks[0].compute_excess_ns, -20);
  EXPECT_EQ(stream->ranks[0].stall_ns, 30);
  EXPECT_EQ(stream->compute_faults["events"][0]["action"], "apply");
  auto bad = ParseRecordStream(
      "{\"record\":\"compute_faults\",\"rank\":1,\"events\":[{\"fault\":\"x\"}]}\n", "s.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("events[0]"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace genie::record
