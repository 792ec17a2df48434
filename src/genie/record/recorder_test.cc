#include "genie/record/recorder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "genie/env/faulty_env.h"
#include "genie/env/manual_env.h"
#include "genie/record/event_json.h"
#include "genie/record/record_stream.h"
#include "tests/support/file.h"
#include "tests/support/temp_dir.h"

namespace genie::record {
namespace {

using ::genie::testing::FreshDir;
using ::genie::testing::ReadFile;

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  static const std::string dir = FreshDir("record");
  return dir + "/" + name;
}

OpEvent Collective() {
  OpEvent e;
  e.rank = 3;
  e.iteration = 1;
  e.node = 12345678901234ull;
  e.name = "allreduce \"grad\"";
  e.kind = OpKind::kCollective;
  e.start = 100;
  e.end = 64540;
  e.coll_type = CollectiveType::kReduceScatter;
  e.size = 1048576;
  e.group = 2;
  e.group_size = 4;
  e.algorithm = "ring,direct";
  e.bytes_sent = 786432;
  e.bytes_received = 786432;
  return e;
}

OpEvent Recv() {
  OpEvent e;
  e.rank = 3;
  e.node = 7;
  e.name = "recv";
  e.kind = OpKind::kRecv;
  e.start = 5;
  e.end = 9;
  e.size = 64;
  e.peer = 2;
  e.bytes_received = 64;
  return e;
}

OpEvent Compute() {
  OpEvent e;
  e.rank = 3;
  e.node = 8;
  e.name = "gemm";
  e.kind = OpKind::kCompute;
  e.is_cpu_op = true;
  e.start = 10;
  e.end = 20;
  e.size = 999;  // not written: compute ops carry no communication fields
  return e;
}

void ExpectSame(const OpEvent& a, const OpEvent& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.iteration, b.iteration);
  EXPECT_EQ(a.node, b.node);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.is_cpu_op, b.is_cpu_op);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.coll_type, b.coll_type);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.group, b.group);
  EXPECT_EQ(a.group_size, b.group_size);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.peer, b.peer);
  EXPECT_EQ(a.bytes_sent, b.bytes_sent);
  EXPECT_EQ(a.bytes_received, b.bytes_received);
}

RankSummary Summary() { return {3, 1, 100, 64540, 10, 64440, 64430}; }

TEST(RecorderTest, MemoryOnlyKeepsEverything) {
  auto r = Recorder::Create("", {{"rank", 3}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  (*r)->OnOp(Collective());
  (*r)->OnRankDone(Summary());
  ASSERT_EQ((*r)->ops().size(), 1u);
  ASSERT_EQ((*r)->ranks().size(), 1u);
  EXPECT_EQ((*r)->ranks()[0].exposed_comm_ns, 64430);
  EXPECT_TRUE((*r)->Close().ok());
}

TEST(RecorderTest, KeepsOnlyTheOpsOfTheRanksOfInterest) {
  auto r = Recorder::Create("", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  (*r)->KeepOpsOf({7, 2});
  for (int rank : {1, 2, 3, 7, 8}) {
    OpEvent e = Collective();
    e.rank = rank;
    (*r)->OnOp(e);
    RankSummary s = Summary();
    s.rank = rank;
    (*r)->OnRankDone(s);
  }
  ASSERT_EQ((*r)->ops().size(), 2u);
  EXPECT_EQ((*r)->ops()[0].rank, 2);
  EXPECT_EQ((*r)->ops()[1].rank, 7);
  EXPECT_EQ((*r)->ranks().size(), 5u);  // every rank's summary
}

TEST(RecorderTest, StreamRoundTripsAndIsFlushedPerRecord) {
  std::string path = TempPath("roundtrip.jsonl");
  auto r = Recorder::Create(path, {{"rank", 3}, {"world_size", 8}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  (*r)->OnOp(Collective());
  // Readable while the recorder is still open: every line is flushed as it is written.
  auto mid = ReadRecordStream(path);
  ASSERT_TRUE(mid.ok()) << mid.status().ToString();
  EXPECT_EQ(mid->ops.size(), 1u);
  (*r)->OnOp(Recv());
  (*r)->OnOp(Compute());
  (*r)->OnRankDone(Summary());
  ASSERT_TRUE((*r)->Close().ok());

  std::string text = ReadFile(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5);
  EXPECT_EQ(text.rfind("{\"format\":\"genie-record\",\"record\":\"header\",\"run\":{\"rank\":3,"
                       "\"world_size\":8},\"version\":1}\n", 0),
            0u)
      << text;

  auto s = ReadRecordStream(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->truncated);
  EXPECT_EQ(s->header, nlohmann::json({{"rank", 3}, {"world_size", 8}}));
  ASSERT_EQ(s->ops.size(), 3u);
  ExpectSame(s->ops[0], Collective());
  ExpectSame(s->ops[1], Recv());
  OpEvent compute = Compute();
  compute.size = 0;
  ExpectSame(s->ops[2], compute);
  ASSERT_EQ(s->ranks.size(), 1u);
  EXPECT_EQ(s->ranks[0].rank, 3);
  EXPECT_EQ(s->ranks[0].iteration, 1);
  EXPECT_EQ(s->ranks[0].start, 100);
  EXPECT_EQ(s->ranks[0].finish, 64540);
  EXPECT_EQ(s->ranks[0].compute_ns, 10);
  EXPECT_EQ(s->ranks[0].comm_ns, 64440);
  EXPECT_EQ(s->ranks[0].exposed_comm_ns, 64430);
}

TEST(RecorderTest, StreamOnlyKeepsNoOpsInMemory) {
  std::string path = TempPath("stream_only.jsonl");
  auto r = Recorder::Create(path, {{"rank", 3}}, /*keep_ops=*/false);
  ASSERT_TRUE(r.ok());
  (*r)->OnOp(Collective());
  (*r)->OnOp(Recv());
  (*r)->OnRankDone(Summary());
  EXPECT_TRUE((*r)->ops().empty());
  EXPECT_EQ((*r)->ranks().size(), 1u);
  auto s = ReadRecordStream(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ops.size(), 2u);
  EXPECT_EQ(s->ranks.size(), 1u);
}

TEST(RecordStreamTest, TruncatedLastLineIsDroppedEverywhereItCanBeCut) {
  std::string path = TempPath("full.jsonl");
  {
    auto r = Recorder::Create(path, {{"rank", 3}});
    ASSERT_TRUE(r.ok());
    (*r)->OnOp(Collective());
    (*r)->OnOp(Recv());
  }
  std::string text = ReadFile(path);
  size_t last_start = text.rfind('\n', text.size() - 2) + 1;
  // Cut the last record at every byte: a crash mid-write. The first record always survives.
  for (size_t cut = last_start + 1; cut < text.size() - 1; ++cut) {
    auto s = ParseRecordStream(text.substr(0, cut), "cut.jsonl");
    ASSERT_TRUE(s.ok()) << "cut at " << cut << ": " << s.status().ToString();
    EXPECT_TRUE(s->truncated) << cut;
    ASSERT_EQ(s->ops.size(), 1u) << cut;
    ExpectSame(s->ops[0], Collective());
  }
  // Cut right after a newline: nothing is lost and nothing is flagged.
  auto whole = ParseRecordStream(text.substr(0, last_start), "cut.jsonl");
  ASSERT_TRUE(whole.ok());
  EXPECT_FALSE(whole->truncated);
  EXPECT_EQ(whole->ops.size(), 1u);
}

TEST(RecordStreamTest, DamageBeforeTheLastLineIsAnErrorNamingFileAndLine) {
  std::string text =
      "{\"record\":\"header\",\"format\":\"genie-record\",\"version\":1,\"run\":{}}\n"
      "{\"record\":\"op\",\"rank\":0,\"kind\":\"comp\n"
      "{\"record\":\"op\",\"rank\":0,\"kind\":\"compute\"}\n";
  auto s = ParseRecordStream(text, "rank0.jsonl");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kCorruption);
  EXPECT_NE(s.status().message().find("rank0.jsonl: line 2"), std::string::npos)
      << s.status().message();
}

TEST(RecordStreamTest, BadFieldsAreErrorsNamingTheField) {
  std::string text = "{\"record\":\"op\",\"rank\":\"zero\",\"kind\":\"compute\"}\n";
  auto s = ParseRecordStream(text, "r.jsonl");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("r.jsonl: line 1"), std::string::npos);
  EXPECT_NE(s.status().message().find("\"rank\""), std::string::npos) << s.status().message();

  auto k = ParseRecordStream("{\"record\":\"op\",\"kind\":\"teleport\"}\n", "r.jsonl");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("teleport"), std::string::npos);

  auto f = ParseRecordStream("{\"record\":\"header\",\"format\":\"other\"}\n", "r.jsonl");
  ASSERT_FALSE(f.ok());
}

TEST(EventJsonTest, FastOpRecordParsesBackToTheJsonForm) {
  std::vector<OpEvent> events = {Collective(), Recv(), Compute()};
  for (const char* name :
       {"a\\b\"c", "tab\there\nnl\x01", "caf\xc3\xa9 \xe2\x86\x92", "bad\xff\xfe", ""}) {
    OpEvent e = Collective();
    e.name = name;
    e.algorithm = name;
    events.push_back(e);
  }
  OpEvent neg = Recv();
  neg.iteration = -2;
  neg.start = -5;
  neg.group = -1;
  events.push_back(neg);
  for (const OpEvent& e : events) {
    std::string line;
    AppendOpRecord(e, &line);
    SCOPED_TRACE(line);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    nlohmann::json parsed = nlohmann::json::parse(line);
    nlohmann::json expected = ToJson(e);
    expected["record"] = "op";
    if (e.name.find('\xff') != std::string::npos) {
      // Invalid UTF-8 is replaced (U+FFFD), never written raw.
      EXPECT_EQ(parsed["name"], "bad\xef\xbf\xbd\xef\xbf\xbd");
      parsed.erase("name");
      parsed.erase("algorithm");
      expected.erase("name");
      expected.erase("algorithm");
    }
    EXPECT_EQ(parsed, expected);
  }
}

TEST(RecorderTest, UnwritablePathIsAnIoErrorNamingIt) {
  auto r = Recorder::Create("/nonexistent-dir/x/rank0.jsonl", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kIoError);
  EXPECT_NE(r.status().message().find("/nonexistent-dir/x/rank0.jsonl"), std::string::npos);
}

// A disk that fills mid-run: the first failed record is the recorder's status, naming the
// stream and the OS's reason; what was written before stays readable, records stay in memory.
TEST(RecorderTest, ADiskFullMidRunIsKeptAsTheStatusAndTheStreamStaysReadable) {
  env::ManualEnv manual;
  env::FaultyEnv env(&manual);
  ASSERT_TRUE(env.CreateDirs("/out").ok());
  auto r = Recorder::Create("/out/rank-0.jsonl", {{"rank", 0}}, true, &env);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string before = *env.ReadFile("/out/rank-0.jsonl");
  env.SetDiskFull("/out", 0);
  RankSummary s;
  s.rank = 0;
  (*r)->OnRankDone(s);
  (*r)->OnRankDone(s);
  EXPECT_EQ((*r)->status().code(), Status::Code::kIoError);
  EXPECT_EQ((*r)->status().message(),
            "writing results stream /out/rank-0.jsonl: No space left on device (disk full?)");
  EXPECT_EQ((*r)->ranks().size(), 2u);
  EXPECT_EQ(*env.ReadFile("/out/rank-0.jsonl"), before);
  auto back = ParseRecordStream(before, "/out/rank-0.jsonl");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->header["rank"], 0);
  EXPECT_EQ((*r)->Close().message(), (*r)->status().message());
}

TEST(RecorderTest, AReadOnlyOutputFolderIsAClearError) {
  env::ManualEnv manual;
  env::FaultyEnv env(&manual);
  env.SetReadOnly("/out");
  auto r = Recorder::Create("/out/rank-0.jsonl", {}, true, &env);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cannot create results stream /out/rank-0.jsonl: Read-only file system (check that "
            "the output directory exists and is writable)");
}

TEST(RecordStreamTest, MissingFileIsNotFound) {
  auto s = ReadRecordStream(TempPath("does-not-exist.jsonl"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace genie::record
