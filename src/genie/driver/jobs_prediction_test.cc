// A jobs file made into a jobs simulation as the launcher really ran it: a run: job issues its
// collectives as genie run does (every comm stream at once), and each job starts when its rank
// streams say it began, not at the file's offset.
#include "genie/driver/jobs_prediction.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "genie/env/env.h"
#include "genie/trace/attributes.h"
#include "tests/support/switch_workload.h"
#include "tests/support/temp_dir.h"

namespace genie::driver {
namespace {

using ::genie::testing::TempDir;
using ::genie::testing::WriteEveryRank;

class JobsPredictionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ChakraProtoMsg::Node node;
    node.set_id(1);
    node.set_name("ar");
    node.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    trace::AddInt64(&node, "comm_type", 0);  // ALL_REDUCE
    trace::AddUint64(&node, "comm_size", 1 << 20);
    ASSERT_NO_FATAL_FAILURE(WriteEveryRank((dir_ / "ar").string(), 2, {node}));
  }

  // A jobs file of workload jobs a and b (2 ranks each, b starting 1 s after a) and a traffic
  // job starting 2 s after the launch; every job's folder under dir_/out.
  JobsSpec Spec() const {
    const std::string text = "output: " + (dir_ / "out").string() + R"(
jobs:
  - name: a
    ranks: 2
    run: {workload: ar}
  - name: b
    ranks: 2
    start: 1s
    run: {workload: ar}
  - name: noise
    type: traffic
    pairs: [[h0, h1]]
    start: 2s
    duration: 1s
)";
    const auto file = dir_ / "jobs.yml";
    std::ofstream(file) << text;
    auto spec = LoadJobsSpec(file.string());
    EXPECT_TRUE(spec.ok()) << spec.status().message();
    if (!spec.ok()) return {};
    EXPECT_TRUE(PlaceJobs({"h0", "h1", "h2", "h3"}, 1, &*spec).ok());
    return *spec;
  }

  // Rank `rank`'s stream in job `job`'s folder: its header, then one rank record per start.
  void Stream(const std::string& job, int rank, std::vector<TimeNs> starts) const {
    const auto folder = dir_ / "out" / job;
    std::filesystem::create_directories(folder);
    std::ofstream out(folder / ("rank-" + std::to_string(rank) + ".jsonl"));
    out << R"({"format":"genie-record","record":"header","run":{"start":1}})" << "\n";
    int iteration = -1;
    for (TimeNs s : starts) {
      out << R"({"record":"rank","rank":)" << rank << R"(,"iteration":)" << iteration++
          << R"(,"start":)" << s << R"(,"finish":)" << s + 1000 << "}\n";
    }
  }

  TempDir tmp_{"jobs_prediction"};
  std::filesystem::path dir_ = tmp_.path();
};

TEST_F(JobsPredictionTest, ARunJobIssuesItsCommStreamsConcurrentlyAsGenieRunDoes) {
  auto model = ModelJobs(Spec());
  ASSERT_TRUE(model.ok()) << model.status().message();
  int workloads = 0;
  for (const SimJob& j : model->jobs) {
    if (j.setup == nullptr) continue;
    ++workloads;
    EXPECT_EQ(j.setup->exec.comm_streams, runtime::ExecutorConfig::CommStreams::kConcurrent)
        << j.name;
  }
  EXPECT_EQ(workloads, 2);
}

TEST_F(JobsPredictionTest, TheFirstRecordedIterationStartIsTheJobsStart) {
  EXPECT_FALSE(RecordedJobStart((dir_ / "out" / "a").string()).has_value());
  Stream("a", 0, {5'000'000'000, 5'100'000'000});
  Stream("a", 1, {4'900'000'000, 5'100'000'000});
  // A stream still being written: its last line cut short.
  std::ofstream(dir_ / "out" / "a" / "rank-2.jsonl") << R"({"record":"rank","rank":2,"sta)";
  EXPECT_EQ(RecordedJobStart((dir_ / "out" / "a").string()), 4'900'000'000);
}

TEST_F(JobsPredictionTest, JobsStartWhenTheirStreamsSayTheyBegan) {
  const JobsSpec spec = Spec();
  // Each job's start in a fresh model after StartAsMeasured(spec, own).
  auto starts = [&](const std::string& own, int measured) {
    auto model = ModelJobs(spec);
    EXPECT_TRUE(model.ok()) << model.status().message();
    std::vector<TimeNs> s;
    if (!model.ok()) return s;
    EXPECT_EQ(StartAsMeasured(spec, own, &*model), measured) << own;
    for (const SimJob& j : model->jobs) s.push_back(j.start_ns);
    return s;
  };
  // Nothing recorded: the file's offsets.
  EXPECT_EQ(starts("a", 0), (std::vector<TimeNs>{0, 1'000'000'000, 2'000'000'000}));
  // b began 1.3 s after a (the file said 1 s); the traffic job has no streams: the file's
  // offset from the own job's start (from b: 1 s after b, which began 0.3 s late).
  Stream("a", 0, {10'000'000'000});
  Stream("b", 0, {11'300'000'000});
  EXPECT_EQ(starts("a", 2), (std::vector<TimeNs>{0, 1'300'000'000, 2'000'000'000}));
  EXPECT_EQ(starts("b", 2), (std::vector<TimeNs>{0, 1'300'000'000, 2'300'000'000}));
  // b began 0.2 s before a: everything shifts so that b starts at 0.
  Stream("b", 0, {9'800'000'000});
  EXPECT_EQ(starts("a", 2), (std::vector<TimeNs>{200'000'000, 0, 2'200'000'000}));
  // b has not recorded an iteration yet: the file's offset.
  std::filesystem::remove(dir_ / "out" / "b" / "rank-0.jsonl");
  EXPECT_EQ(starts("a", 1), (std::vector<TimeNs>{0, 1'000'000'000, 2'000'000'000}));
}

// A traffic job starts when its senders turned on (their streams' `on_ns`, wall clock), on the
// workload jobs' monotonic clock: here 1.5 s after a began, where the file said 2 s.
TEST_F(JobsPredictionTest, ATrafficJobStartsWhenItsSendersTurnedOn) {
  const JobsSpec spec = Spec();
  EXPECT_FALSE(RecordedTrafficStart((dir_ / "out" / "noise").string()).has_value());
  const TimeNs wall = env::Env::Default()->NowWall();
  const TimeNs mono = env::Env::Default()->Now();
  Stream("a", 0, {mono - 3'000'000'000});  // a began 3 s ago
  const auto noise = dir_ / "out" / "noise";
  std::filesystem::create_directories(noise);
  auto sender = [&](int rank, TimeNs on_ago) {
    std::ofstream(noise / ("traffic-rank-" + std::to_string(rank) + ".jsonl"))
        << R"({"pair":0,"rank":)" << rank << R"(,"role":"send"})" << "\n"
        << R"({"on_ns":)" << wall - on_ago << "}\n";
  };
  sender(0, 1'500'000'000);  // turned on 1.5 s ago
  sender(2, 1'000'000'000);  // a later sender: the earliest counts
  std::ofstream(noise / "traffic-rank-1.jsonl") << R"({"pair":0,"rank":1,"role":"recv"})" << "\n";
  auto model = ModelJobs(spec);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(StartAsMeasured(spec, "a", &*model), 2);
  ASSERT_EQ(model->jobs.size(), 3u);
  EXPECT_EQ(model->jobs[0].start_ns, 0);
  EXPECT_NEAR(static_cast<double>(model->jobs[2].start_ns), 1.5e9, 5e6);  // the clocks' reads
}

}  // namespace
}  // namespace genie::driver
