// End-to-end tests of `genie results show | strip | merge` on real files: per-rank JSON-lines
// streams written by the Recorder (as `genie run` writes them), run through the genie binary.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "genie/record/recorder.h"
#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using genie::TimeNs;
using genie::record::OpEvent;
using genie::record::RankSummary;
using genie::testing::ReadFile;
using genie::testing::TempDir;
using nlohmann::json;

const std::string kGenie = genie::testing::GenieBinary();

// A command's exit code and its output (stderr merged), run by the one test helper.
struct Proc {
  int exit_code;
  std::string out;
};

Proc Sh(const std::string& cmd) {
  genie::testing::CliResult r = genie::testing::RunCli(cmd);
  return {r.exit_code, r.output};
}

// "%s.stripped.json" with %s = run name.
std::string Name(std::string pattern, const std::string& run) {
  return pattern.replace(pattern.find("%s"), 2, run);
}

class ResultsE2eTest : public ::testing::Test {
 protected:
  std::string P(const std::string& name) { return (dir_ / name).string(); }

  // One run of a 4-rank workload: per rank a compute op then a 1 MiB ring all-reduce, and a
  // SEND/RECV pair between ranks 0 and 1. `slow` stretches the timings (a second, slower run).
  void WriteRun(const std::string& prefix, TimeNs slow) {
    for (int rank = 0; rank < 4; ++rank) {
      json header = {{"rank", rank},
                     {"world_size", 4},
                     {"provenance",
                      {{"hostname", prefix},
                       {"time", prefix},
                       {"configs", {{"system", {{"endpoint-delay", 10}}}}}}}};
      auto rec = genie::record::Recorder::Create(
          P(prefix + ".rank" + std::to_string(rank) + ".jsonl"), header);
      ASSERT_TRUE(rec.ok()) << rec.status().ToString();
      OpEvent comp;
      comp.rank = rank;
      comp.node = 1;
      comp.name = "fwd";
      comp.kind = genie::OpKind::kCompute;
      comp.start = 0;
      comp.end = 1000 + slow;
      OpEvent coll;
      coll.rank = rank;
      coll.node = 2;
      coll.name = "allreduce";
      coll.kind = genie::OpKind::kCollective;
      coll.coll_type = genie::CollectiveType::kAllReduce;
      coll.size = 1048576;
      coll.group_size = 4;
      coll.algorithm = "ring";
      coll.bytes_sent = 786432;
      coll.bytes_received = 786432;
      coll.start = comp.end;
      coll.end = coll.start + 64440 + slow * rank;
      OpEvent p2p;
      p2p.rank = rank;
      p2p.node = 3;
      p2p.kind = rank == 0 ? genie::OpKind::kSend : genie::OpKind::kRecv;
      p2p.size = 4096;
      p2p.peer = 1 - rank;
      p2p.start = 10;
      p2p.end = 2000 + slow;
      // Completion order differs between the runs.
      if (slow == 0) {
        (*rec)->OnOp(comp);
        if (rank < 2) (*rec)->OnOp(p2p);
      } else {
        if (rank < 2) (*rec)->OnOp(p2p);
        (*rec)->OnOp(comp);
      }
      (*rec)->OnOp(coll);
      (*rec)->OnRankDone({rank, 0, 0, coll.end, comp.end, coll.end - std::min(comp.end, p2p.end),
                          coll.end - comp.end});
    }
  }
  std::string Streams(const std::string& prefix) {
    std::string s;
    for (int r = 0; r < 4; ++r) s += " " + P(prefix + ".rank" + std::to_string(r) + ".jsonl");
    return s;
  }
  TempDir tmp_{"results-e2e"};
  fs::path dir_ = tmp_.path();
};

TEST_F(ResultsE2eTest, MergeWritesAResultsJsonAndAValidChromeTrace) {
  WriteRun("a", 0);
  Proc m = Sh(kGenie + " results merge " + P("a.json") + Streams("a"));
  ASSERT_EQ(m.exit_code, 0) << m.out;
  EXPECT_NE(m.out.find("(4 ranks, 10 ops)"), std::string::npos) << m.out;

  json doc = json::parse(ReadFile(P("a.json")));
  EXPECT_EQ(doc["format"], "genie-results");
  EXPECT_EQ(doc["summary"]["ranks"], 4);
  EXPECT_EQ(doc["summary"]["step_time_ns"]["max"], 65440);
  EXPECT_EQ(doc["collectives"].size(), 6u);  // 4 all-reduces, one send, one recv
  EXPECT_EQ(doc["collective_types"][0]["type"], "all_reduce");
  EXPECT_DOUBLE_EQ(doc["collective_types"][0]["busbw_gbps"].get<double>(),
                   1048576.0 / 64440.0 * 1.5);
  EXPECT_EQ(doc["provenance"]["merged_files"].size(), 4u);
  EXPECT_EQ(doc["clock_offsets_ns"], json::object());

  json trace = json::parse(ReadFile(P("a.trace.json")));
  int slices = 0;
  for (const json& e : trace["traceEvents"]) {
    for (const char* k : {"ph", "ts", "pid", "tid", "name"}) ASSERT_TRUE(e.contains(k)) << k;
    if (e["ph"] == "X") {
      ASSERT_TRUE(e.contains("dur"));
      ++slices;
    }
  }
  EXPECT_EQ(slices, 10);
}

TEST_F(ResultsE2eTest, ClockOffsetsAreAppliedAndRecorded) {
  WriteRun("a", 0);
  Proc m = Sh(kGenie + " results merge " + P("o.json") +
              " --clock-offset 2=500 --clock-offset 3=-7" + Streams("a"));
  ASSERT_EQ(m.exit_code, 0) << m.out;
  json doc = json::parse(ReadFile(P("o.json")));
  EXPECT_EQ(doc["clock_offsets_ns"], json({{"2", 500}, {"3", -7}}));
  EXPECT_EQ(doc["ranks"][2]["finish"], 65440 + 500);
  EXPECT_EQ(doc["ranks"][3]["start"], -7);

  Proc bad = Sh(kGenie + " results merge " + P("x.json") + " --clock-offset two" + Streams("a"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.out.find("RANK=NS"), std::string::npos) << bad.out;
}

TEST_F(ResultsE2eTest, StripMakesTwoRunsWithDifferentTimingsIdentical) {
  WriteRun("a", 0);
  WriteRun("b", 777);
  ASSERT_EQ(Sh(kGenie + " results merge " + P("a.json") + Streams("a")).exit_code, 0);
  ASSERT_EQ(Sh(kGenie + " results merge " + P("b.json") + Streams("b")).exit_code, 0);
  // Before stripping the runs differ ...
  EXPECT_NE(Sh("diff -q " + P("a.json") + " " + P("b.json")).exit_code, 0);
  EXPECT_NE(Sh("diff -q " + P("a.rank1.jsonl") + " " + P("b.rank1.jsonl")).exit_code, 0);

  Proc s =
      Sh(kGenie + " results strip " + P("a.json") + " " + P("b.json") + " " + P("a.trace.json") +
         " " + P("b.trace.json") + " " + P("a.rank1.jsonl") + " " + P("b.rank1.jsonl"));
  ASSERT_EQ(s.exit_code, 0) << s.out;
  EXPECT_NE(s.out.find(P("a.stripped.json")), std::string::npos) << s.out;
  // ... and after it they are equal, byte for byte, with diff.
  for (const char* name :
       {"%s.stripped.json", "%s.trace.stripped.json", "%s.rank1.stripped.jsonl"}) {
    std::string fa = P(Name(name, "a"));
    std::string fb = P(Name(name, "b"));
    Proc d = Sh("diff " + fa + " " + fb);
    EXPECT_EQ(d.exit_code, 0) << fa << "\n" << d.out;
    EXPECT_GT(ReadFile(fa).size(), 100u);
    EXPECT_EQ(ReadFile(fa).find("\"end\""), std::string::npos);
  }
  // --stdout gives the same text.
  Proc o = Sh(kGenie + " results strip --stdout " + P("a.json"));
  EXPECT_EQ(o.out, ReadFile(P("a.stripped.json")));
}

TEST_F(ResultsE2eTest, ShowPrintsTheSummaryAndAstraSimLines) {
  WriteRun("a", 0);
  ASSERT_EQ(Sh(kGenie + " results merge " + P("a.json") + Streams("a")).exit_code, 0);
  Proc s = Sh(kGenie + " results show --astra-sim " + P("a.json"));
  ASSERT_EQ(s.exit_code, 0) << s.out;
  EXPECT_NE(s.out.find("# genie results: 4 ranks, 1 measured iteration\n"), std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("all_reduce"), std::string::npos);
  EXPECT_NE(s.out.find("# Avg bus bandwidth"), std::string::npos);
  for (int r = 0; r < 4; ++r) {
    std::string line = "sys[" + std::to_string(r) +
                       "] finished, 65440 cycles, exposed communication 64440 cycles.\n";
    EXPECT_NE(s.out.find(line), std::string::npos) << line << s.out;
  }
  // The rank streams directly (merged on the fly) give the same summary.
  Proc direct = Sh(kGenie + " results show --astra-sim" + Streams("a"));
  ASSERT_EQ(direct.exit_code, 0) << direct.out;
  EXPECT_EQ(direct.out, s.out);
}

TEST_F(ResultsE2eTest, ShowReadsAStreamCutMidRecord) {
  WriteRun("a", 0);
  std::string p = P("a.rank0.jsonl");
  fs::resize_file(p, fs::file_size(p) - 5);  // the rank record loses its tail
  Proc s = Sh(kGenie + " results show " + p);
  ASSERT_EQ(s.exit_code, 0) << s.out;
  EXPECT_NE(s.out.find("last record was incomplete"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("all_reduce"), std::string::npos) << s.out;
}

TEST_F(ResultsE2eTest, ErrorsNameTheFile) {
  std::string p = P("junk.json");
  std::ofstream(p) << "[1, 2, 3]\n";
  Proc s = Sh(kGenie + " results show " + p);
  EXPECT_NE(s.exit_code, 0);
  EXPECT_NE(s.out.find(p), std::string::npos) << s.out;
}

// Issue 19: nothing a user gives `genie results` crashes it. Empty, header-less, skeletal,
// mistyped and absurdly nested files: valid ones show (exit 0), invalid ones are bad input
// (exit 2) with a message naming the file — never an abort or a segfault.
TEST_F(ResultsE2eTest, OddFilesNeverCrashShowOrStrip) {
  struct Case {
    const char* name;
    std::string text;
    int show_exit;
    const char* says;  // in the output
  };
  const Case cases[] = {
      {"empty.jsonl", "", 2, "is empty"},
      {"headerless.jsonl",
       "{\"record\":\"op\",\"rank\":0,\"kind\":\"compute\",\"start\":0,\"end\":5}\n"
       "{\"record\":\"rank\",\"rank\":0,\"iteration\":0,\"start\":0,\"finish\":5}\n",
       0, "# genie results: 1 ranks"},
      {"skeletal.json", "{\"format\":\"genie-results\"}\n", 0, "# genie results: 0 ranks"},
      {"skeletal_stream.jsonl",
       "{\"record\":\"header\",\"format\":\"genie-record\",\"version\":1}\n", 0,
       "# genie results: 0 ranks"},
      {"mistyped.json", "{\"format\":\"genie-results\",\"ranks\":[1]}\n", 2, "ranks[0]"},
      {"mistyped.jsonl",
       "{\"record\":\"header\",\"format\":\"genie-record\",\"run\":{}}\n"
       "{\"record\":\"op\",\"rank\":0,\"kind\":\"compute\",\"start\":\"x\"}\n",
       2, "line 2: field \"start\""},
      {"deep.json", std::string(100000, '[') + std::string(100000, ']') + "\n", 2, "nested"},
  };
  for (const Case& c : cases) {
    const std::string p = P(c.name);
    std::ofstream(p) << c.text;
    Proc show = Sh(kGenie + " results show " + p);
    EXPECT_EQ(show.exit_code, c.show_exit) << c.name << "\n" << show.out;
    EXPECT_NE(show.out.find(c.says), std::string::npos) << c.name << "\n" << show.out;
    if (c.show_exit == 2) {
      EXPECT_NE(show.out.find(p), std::string::npos) << show.out;
    }
  }
  // Strip walks the whole tree: deep nesting is refused, not a stack overflow.
  Proc strip = Sh(kGenie + " results strip --stdout " + P("deep.json"));
  EXPECT_EQ(strip.exit_code, 2) << strip.out;
  EXPECT_NE(strip.out.find(P("deep.json")), std::string::npos) << strip.out;
  std::ofstream(P("deep.jsonl")) << std::string(200000, '{') << "\n";
  Proc lines = Sh(kGenie + " results strip --stdout " + P("deep.jsonl"));
  EXPECT_EQ(lines.exit_code, 2) << lines.out;
}

// A 4-rank run of 2 iterations that was killed: rank 3 left no stream, rank 1 finished only
// iteration 0. show and merge say so, naming the ranks and iterations; the results JSON says so
// too. A complete run says nothing of the kind.
TEST_F(ResultsE2eTest, AnIncompleteRunIsShownAsIncompleteNamingWhatIsMissing) {
  auto write = [&](const std::string& prefix, int rank, int iterations_done) {
    json header = {{"rank", rank}, {"world_size", 4}, {"iterations", 2}, {"warmup", 0}};
    auto rec = genie::record::Recorder::Create(
        P(prefix + ".rank" + std::to_string(rank) + ".jsonl"), header);
    ASSERT_TRUE(rec.ok());
    for (int it = 0; it < 2; ++it) {
      OpEvent op;
      op.rank = rank;
      op.iteration = it;
      op.node = 1;
      op.kind = genie::OpKind::kCompute;
      op.start = it * 1000;
      op.end = it * 1000 + 900;
      if (it > iterations_done) break;
      (*rec)->OnOp(op);
      if (it < iterations_done) (*rec)->OnRankDone({rank, it, op.start, op.end, 900, 0, 0});
    }
  };
  for (int rank = 0; rank < 4; ++rank) write("full", rank, 2);
  for (int rank = 0; rank < 3; ++rank) write("cut", rank, rank == 1 ? 1 : 2);
  const std::string cut =
      P("cut.rank0.jsonl") + " " + P("cut.rank1.jsonl") + " " + P("cut.rank2.jsonl");

  Proc full = Sh(kGenie + " results show" + Streams("full"));
  ASSERT_EQ(full.exit_code, 0) << full.out;
  EXPECT_EQ(full.out.find("INCOMPLETE"), std::string::npos) << full.out;

  Proc show = Sh(kGenie + " results show " + cut);
  EXPECT_EQ(show.exit_code, 0) << show.out;
  EXPECT_NE(show.out.find("# INCOMPLETE"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("ranks with no records: 3 (of 4)"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("iterations not finished: rank 1: 1"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("warning: incomplete run"), std::string::npos) << show.out;

  Proc merge = Sh(kGenie + " results merge " + P("cut.json") + " " + cut);
  ASSERT_EQ(merge.exit_code, 0) << merge.out;
  EXPECT_NE(merge.out.find("# INCOMPLETE"), std::string::npos) << merge.out;
  json doc = json::parse(ReadFile(P("cut.json")));
  EXPECT_EQ(doc["completeness"]["complete"], false);
  EXPECT_EQ(doc["completeness"]["missing_ranks"], json::parse("[[3,3]]"));
  EXPECT_EQ(doc["completeness"]["unfinished_iterations"], json::parse("{\"1\":[[1,1]]}"));
  // The merged file shows the same.
  Proc again = Sh(kGenie + " results show " + P("cut.json"));
  EXPECT_NE(again.out.find("ranks with no records: 3 (of 4)"), std::string::npos) << again.out;
}

// `genie results merge OUT INPUTS...` with OUT (or the trace) naming an input used to overwrite
// that input. Refused, naming the file, exit 2, inputs untouched.
TEST_F(ResultsE2eTest, MergeRefusesToOverwriteOneOfItsInputs) {
  WriteRun("a", 0);
  const std::string input = P("a.rank0.jsonl");
  const std::string before = ReadFile(input);
  Proc m = Sh(kGenie + " results merge " + input + Streams("a"));
  EXPECT_EQ(m.exit_code, 2) << m.out;
  EXPECT_NE(m.out.find("refusing to write " + input), std::string::npos) << m.out;
  EXPECT_EQ(ReadFile(input), before);

  Proc t = Sh(kGenie + " results merge " + P("ok.json") + " --trace-out " + P("a.rank2.jsonl") +
              Streams("a"));
  EXPECT_EQ(t.exit_code, 2) << t.out;
  EXPECT_NE(t.out.find("refusing to write " + P("a.rank2.jsonl")), std::string::npos) << t.out;
  EXPECT_FALSE(fs::exists(P("ok.json")));  // refused before writing anything
}

// Two `genie run` jobs with one --output folder: the second fails at once (exit 2), naming the
// folder and the job in it, before touching any stream; the first ends with its complete
// results. (The second used to overwrite the first's streams, and the first then crashed
// writing its results.) The first job is stopped (SIGSTOP: it keeps its claim) while the second
// tries, so that it cannot end first however slowly the second starts (under ASan a start took
// seconds).
TEST_F(ResultsE2eTest, ASecondJobInTheSameOutputFolderFailsUpFront) {
  ASSERT_EQ(Sh(kGenie + " gen compute-chain --count 100 --duration 3ms --ranks 2 -o " + P("chain"))
                .exit_code,
            0);
  const std::string out = P("out");
  const std::string run =
      kGenie + " run " + P("chain") + " --spin-us 0 --peer-timeout 120s -o " + out;
  genie::testing::Child first = genie::testing::Spawn(run + " --iterations 3", P("first.log"));
  struct Reap {  // a failed test leaves nothing stopped or running
    genie::testing::Child& c;
    ~Reap() {
      genie::testing::Signal(c, SIGCONT);
      genie::testing::Signal(c, SIGKILL);
      genie::testing::WaitExit(c, 5);
    }
  } reap{first};
  // Wait until the first job runs: its rank 0 has connected and written its clock record.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ReadFile(out + "/rank-0.jsonl").find("\"clock\"") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(ReadFile(out + "/rank-0.jsonl").find("\"clock\""), std::string::npos)
      << genie::testing::ReadLog(first);
  genie::testing::Signal(first, SIGSTOP);  // the launcher and both ranks: one process group
  ASSERT_FALSE(genie::testing::WaitExit(first, 0).has_value()) << genie::testing::ReadLog(first);
  const std::string stream0 = ReadFile(out + "/rank-0.jsonl");

  Proc second = Sh(run + " --iterations 1");
  EXPECT_EQ(second.exit_code, 2) << second.out;
  EXPECT_NE(second.out.find("output folder " + out + " is in use by another genie job"),
            std::string::npos)
      << second.out;
  EXPECT_EQ(ReadFile(out + "/rank-0.jsonl"), stream0);  // untouched

  genie::testing::Signal(first, SIGCONT);
  const auto code = genie::testing::WaitExit(first, 300);
  ASSERT_TRUE(code.has_value()) << genie::testing::ReadLog(first);
  ASSERT_EQ(*code, 0) << genie::testing::ReadLog(first);
  EXPECT_EQ(ReadFile(out + "/rank-0.jsonl").rfind(stream0, 0), 0u);  // only appended to
  json doc = json::parse(ReadFile(out + "/results.json"));
  EXPECT_EQ(doc["summary"]["ranks"], 2);
  EXPECT_EQ(doc["summary"]["iterations"], 3);
  EXPECT_EQ(doc["completeness"]["complete"], true);
  // Once it is over, the folder is free again.
  Proc third = Sh(run + " --iterations 1");
  EXPECT_EQ(third.exit_code, 0) << third.out;
}

// The output folder replaced while a run goes on: at the end the run finds none of its streams.
// It says which stream is gone and fails (exit 1) — it used to crash writing results.json.
TEST_F(ResultsE2eTest, ARunWhoseOutputFolderWasReplacedSaysItsRecordsAreLost) {
  ASSERT_EQ(Sh(kGenie + " gen compute-chain --count 100 --duration 3ms --ranks 1 -o " + P("chain"))
                .exit_code,
            0);
  const std::string out = P("out");
  auto run = std::async(std::launch::async, [&] {
    return Sh(kGenie + " run " + P("chain") + " --spin-us 0 --iterations 3 -o " + out);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ReadFile(out + "/rank-0.jsonl").find("\"clock\"") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(ReadFile(out + "/rank-0.jsonl").find("\"clock\""), std::string::npos);
  // 0.9 s of compute still to go: the rename takes microseconds.
  fs::rename(out, P("out.old"));
  fs::create_directories(out);

  Proc r = run.get();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(out + "/rank-0.jsonl is no longer this run's stream"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(out + "/results.json"));
  // The records went with the old folder; they are whole there.
  Proc show = Sh(kGenie + " results show " + P("out.old"));
  EXPECT_EQ(show.exit_code, 0) << show.out;
  EXPECT_EQ(show.out.find("INCOMPLETE"), std::string::npos) << show.out;
}

// `genie simulate`: the files it writes through this module, on a real 8-rank STG workload.
TEST_F(ResultsE2eTest, SimulatedStgWorkloadTraceIsValidAndRunsStripEqual) {
  const std::string data = GENIE_DATA_DIR;
  const std::string cfg = data + "/astra-sim-configs/";
  for (const char* run : {"s1", "s2"}) {
    fs::create_directories(P(run));
    Proc sim = Sh(kGenie + " simulate " + data + "/traces/generated/stg/gpt_dp2_tp2_pp2 --system " +
                  cfg + "Ring_4chunks.json --network " + cfg + "Ring_8npus.yml -q -o " + P(run) +
                  " --trace-out " + P(std::string(run) + "/trace.json"));
    ASSERT_EQ(sim.exit_code, 0) << sim.out;
  }
  // Trace Event Format, field by field: one named process per rank, every event complete,
  // no two slices of one thread overlapping.
  json trace = json::parse(ReadFile(P("s1/trace.json")));
  std::set<int> named, with_slices;
  std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>> threads;
  for (const json& e : trace["traceEvents"]) {
    for (const char* k : {"ph", "ts", "pid", "tid", "name"}) ASSERT_TRUE(e.contains(k)) << k;
    ASSERT_TRUE(e["ts"].is_number());
    if (e["ph"] == "M" && e["name"] == "process_name") named.insert(e["pid"].get<int>());
    if (e["ph"] == "X") {
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number()) << e.dump();
      with_slices.insert(e["pid"].get<int>());
      // In integer ns, as Perfetto reads them (llround(µs × 1000)).
      int64_t ts = std::llround(e["ts"].get<double>() * 1000);
      threads[{e["pid"], e["tid"]}].push_back(
          {ts, ts + std::llround(e["dur"].get<double>() * 1000)});
    }
  }
  EXPECT_EQ(named, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(with_slices, named);
  for (auto& [key, v] : threads) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i - 1].second, v[i].first);
  }
  // Two runs: equal once stripped (provenance time differs before).
  Proc st = Sh(kGenie + " results strip " + P("s1/results.json") + " " + P("s2/results.json"));
  ASSERT_EQ(st.exit_code, 0) << st.out;
  EXPECT_EQ(
      Sh("diff " + P("s1/results.stripped.json") + " " + P("s2/results.stripped.json")).exit_code,
      0);
  Proc show = Sh(kGenie + " results show " + P("s1/results.json"));
  ASSERT_EQ(show.exit_code, 0) << show.out;
  EXPECT_NE(show.out.find("# genie results: 8 ranks, 1 measured iteration"), std::string::npos)
      << show.out;
}

}  // namespace
