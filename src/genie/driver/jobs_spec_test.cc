// The jobs file: every key read into JobSpec, every refusal naming the file, job and key, and
// the placement rules (single job as `genie launch --testbed` always placed it; packed,
// interleaved, listed; NIC by slot; traffic pairs).
#include "genie/driver/jobs_spec.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace genie::driver {
namespace {

constexpr const char* kPath = "/cfg/jobs.yml";

std::vector<std::string> Hosts(int n) {
  std::vector<std::string> h;
  for (int i = 0; i < n; ++i) h.push_back("h" + std::to_string(i));
  return h;
}

JobsSpec Parse(const std::string& text) {
  auto s = ParseJobsSpec(text, kPath);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : JobsSpec{};
}

// The error of a file that must be refused.
std::string Refusal(const std::string& text, int hosts = 8, int nics = 1) {
  auto s = ParseJobsSpec(text, kPath);
  if (!s.ok()) return s.status().message();
  Status st = PlaceJobs(Hosts(hosts), nics, &*s);
  EXPECT_FALSE(st.ok()) << "accepted:\n" << text;
  return st.message();
}

TEST(JobsSpecTest, ReadsEveryKindOfJob) {
  JobsSpec s = Parse(R"(
testbed: jobs1
output: out
stop_all_on_failure: true
jobs:
  - name: train
    ranks: 4
    placement: packed
    start: 2s
    iterations: 5
    port: 29700
    run: {workload: traces/w, predict: true, verify: false, channels: 2, report: page.html,
          args: [--warmup, "1"]}
  - name: ar
    ranks: 4
    placement: [h1, 3]
    bench: {collective: all_reduce, minbytes: 1M, maxbytes: 4M, iterations: 3}
  - name: check
    ranks: 2
    output: /abs/check
    args: [netcheck, --bytes, 1M]
  - name: noise
    type: traffic
    pairs: [[h0, h4], [h1, h5]]
    rate: 100mbit
    bytes: 10MiB
    parallel: 2
    start: 500ms
    duration: 3s
    on: 1s
    off: 500ms
)");
  ASSERT_EQ(s.jobs.size(), 4u);
  EXPECT_EQ(s.path, kPath);
  EXPECT_EQ(s.testbed, "jobs1");
  EXPECT_TRUE(s.stop_all_on_failure);

  const JobSpec& train = s.jobs[0];
  EXPECT_EQ(train.type, JobType::kWorkload);
  EXPECT_EQ(train.subcommand, "run");
  EXPECT_EQ(train.workload, "/cfg/traces/w");  // relative to the file's folder
  EXPECT_EQ(train.iterations, 5);
  EXPECT_EQ(train.start_ns, 2 * kNsPerSec);
  EXPECT_EQ(train.port, 29700);
  EXPECT_EQ(train.placement.kind, PlacementKind::kPacked);
  EXPECT_EQ(train.output, "out/train");
  EXPECT_EQ(train.options.at("predict"), "true");
  EXPECT_EQ(train.genie_args,
            (std::vector<std::string>{"run", "--workload", "/cfg/traces/w", "--predict",
                                      "--channels", "2", "--report", "page.html", "--warmup",
                                      "1", "--iterations", "5"}));
  std::vector<std::string> cmd = JobCommand(train);
  EXPECT_EQ(cmd.back(), "out/train");
  EXPECT_EQ(cmd[cmd.size() - 2], "--output");
  EXPECT_EQ(cmd[7], "out/train/page.html");  // a relative output lands in the job's folder
  EXPECT_EQ(JobResultsPath(train), "out/train/results.json");

  const JobSpec& ar = s.jobs[1];
  EXPECT_EQ(ar.subcommand, "bench");
  EXPECT_EQ(ar.iterations, 3);
  EXPECT_EQ(ar.placement.kind, PlacementKind::kListed);
  EXPECT_EQ(ar.genie_args, (std::vector<std::string>{"bench", "--collective", "all_reduce",
                                                     "--minbytes", "1M", "--maxbytes", "4M",
                                                     "--iters", "3"}));
  EXPECT_EQ(JobCommand(ar).back(), "out/ar/bench.json");

  const JobSpec& check = s.jobs[2];
  EXPECT_EQ(check.genie_args, (std::vector<std::string>{"netcheck", "--bytes", "1M"}));
  EXPECT_EQ(check.output, "/abs/check");
  EXPECT_EQ(JobCommand(check), check.genie_args);  // an args: job's flags are its own

  const JobSpec& noise = s.jobs[3];
  EXPECT_EQ(noise.type, JobType::kTraffic);
  EXPECT_EQ(noise.ranks, 4);
  EXPECT_EQ(noise.traffic.rate_bps, 100'000'000u);
  EXPECT_EQ(noise.traffic.bytes, 10u << 20);
  EXPECT_EQ(noise.traffic.parallel, 2);
  EXPECT_EQ(noise.traffic.duration_ns, 3 * kNsPerSec);
  EXPECT_EQ(noise.traffic.on_ns, kNsPerSec);
  EXPECT_EQ(noise.traffic.off_ns, 500 * kNsPerMs);
  EXPECT_EQ(noise.start_ns, 500 * kNsPerMs);
  EXPECT_EQ(JobCommand(noise),
            (std::vector<std::string>{"traffic", "--parallel", "2", "--rate", "100mbit",
                                      "--bytes", "10485760", "--duration", "3000000000ns",
                                      "--on", "1000000000ns", "--off", "500000000ns",
                                      "--output", "out/noise"}));

  ASSERT_TRUE(PlaceJobs(Hosts(8), 1, &s).ok());
  EXPECT_EQ(s.jobs[1].rank_host, (std::vector<int>{1, 3, 1, 3}));
  EXPECT_EQ(s.jobs[3].rank_host, (std::vector<int>{0, 4, 1, 5}));
  EXPECT_EQ(s.jobs[3].traffic.pairs, (std::vector<std::pair<int, int>>{{0, 4}, {1, 5}}));
}

TEST(JobsSpecTest, DefaultOutputIsTheFileStemAndAFlagOverridesIt) {
  JobsSpec s = Parse("jobs: [{name: a, ranks: 2, args: [netcheck]}]");
  EXPECT_EQ(s.output, "jobs-out");
  EXPECT_EQ(s.jobs[0].output, "jobs-out/a");
  ASSERT_TRUE(SetJobsOutput("/tmp/o", &s).ok());
  EXPECT_EQ(s.jobs[0].output, "/tmp/o/a");
}

// A single interleaved job is what `genie launch --testbed` always did: rank i on host i mod H,
// NIC (i / H) mod NICs.
TEST(JobsSpecTest, OneJobIsPlacedAsLaunchTestbedPlacesIt) {
  for (int ranks : {1, 3, 8, 13, 24}) {
    JobsSpec s = Parse("jobs: [{name: a, ranks: " + std::to_string(ranks) + ", args: [x]}]");
    ASSERT_TRUE(PlaceJobs(Hosts(8), 2, &s).ok());
    std::vector<int> host, nic;
    PlaceSingleJob(ranks, 8, 2, &host, &nic);
    EXPECT_EQ(s.jobs[0].rank_host, host) << ranks;
    EXPECT_EQ(s.jobs[0].rank_nic, nic) << ranks;
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(host[static_cast<size_t>(r)], r % 8);
      EXPECT_EQ(nic[static_cast<size_t>(r)], (r / 8) % 2);
    }
  }
}

TEST(JobsSpecTest, PackedFillsHostsInterleavedSharesThem) {
  // Two 8-rank jobs on 8 hosts: two slots a host.
  JobsSpec packed = Parse(R"(jobs:
  - {name: a, ranks: 8, placement: packed, args: [x]}
  - {name: b, ranks: 8, placement: packed, args: [x]})");
  ASSERT_TRUE(PlaceJobs(Hosts(8), 2, &packed).ok());
  EXPECT_EQ(packed.slots_per_host, 2);
  EXPECT_EQ(packed.jobs[0].rank_host, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(packed.jobs[0].rank_nic, (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(packed.jobs[1].rank_host, (std::vector<int>{4, 4, 5, 5, 6, 6, 7, 7}));

  JobsSpec inter = Parse(R"(jobs:
  - {name: a, ranks: 8, placement: interleaved, args: [x]}
  - {name: b, ranks: 8, placement: interleaved, args: [x]})");
  ASSERT_TRUE(PlaceJobs(Hosts(8), 2, &inter).ok());
  EXPECT_EQ(inter.jobs[0].rank_host, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(inter.jobs[0].rank_nic, std::vector<int>(8, 0));
  EXPECT_EQ(inter.jobs[1].rank_host, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(inter.jobs[1].rank_nic, std::vector<int>(8, 1));  // the second slot: NIC 1

  // One slot a host: interleaved skips the hosts already taken.
  JobsSpec mixed = Parse(R"(jobs:
  - {name: a, ranks: 3, placement: [h1, h4, h6], args: [x]}
  - {name: b, ranks: 5, args: [x]})");
  ASSERT_TRUE(PlaceJobs(Hosts(8), 1, &mixed).ok());
  EXPECT_EQ(mixed.jobs[1].rank_host, (std::vector<int>{0, 2, 3, 5, 7}));
}

TEST(JobsSpecTest, TrafficTakesNoSlot) {
  JobsSpec s = Parse(R"(jobs:
  - {name: a, ranks: 4, args: [x]}
  - {name: t, type: traffic, pairs: [[h0, h1]], duration: 1s})");
  ASSERT_TRUE(PlaceJobs(Hosts(4), 1, &s).ok());
  EXPECT_EQ(s.slots_per_host, 1);
  EXPECT_EQ(s.jobs[1].rank_host, (std::vector<int>{0, 1}));
}

TEST(JobsSpecTest, RefusesBadInputNamingFileJobAndKey) {
  auto has = [](const std::string& msg, std::initializer_list<const char*> parts) {
    for (const char* p : parts) {
      EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    }
  };
  has(Refusal("jobs: [{name: a, ranks: 2, args: [x]}]\nfoo: 1"),
      {kPath, "unknown key 'foo'", "known: testbed"});
  has(Refusal("jobs: [{name: a, ranks: 2, args: [x], rnaks: 3}]"),
      {kPath, "job 'a'", "unknown key 'rnaks'"});
  has(Refusal("jobs: [{name: a, ranks: 2, run: {workload: w, predcit: true}}]"),
      {"job 'a'", "run: unknown key 'predcit'"});
  has(Refusal("jobs: [{name: a, ranks: 2, bench: {collective: all_reduce, workload: w}}]"),
      {"job 'a'", "bench: unknown key 'workload'"});
  has(Refusal("jobs: [{name: a, ranks: 0, args: [x]}]"), {"job 'a'", "ranks: 0 is outside 1.."});
  has(Refusal("jobs: [{name: a, ranks: -2, args: [x]}]"), {"ranks: -2"});
  has(Refusal("jobs: [{name: a, args: [x]}]"), {"job 'a'", "ranks:"});
  has(Refusal("jobs: [{name: a, ranks: 2, args: [x]}, {name: a, ranks: 2, args: [y]}]"),
      {"two jobs are named 'a'"});
  has(Refusal(
          "jobs: [{name: a, ranks: 2, port: 29999, args: [x]}, {name: b, ranks: 2, port: 29999, "
          "args: [y]}]"),
      {"jobs 'a' and 'b' both ask for port 29999"});
  has(Refusal(
          "jobs: [{name: a, ranks: 2, output: o, args: [x]}, {name: b, ranks: 2, output: o/, "
          "args: [y]}]"),
      {"jobs 'a' and 'b' would write into the same folder"});
  has(Refusal(
          "jobs: [{name: a, ranks: 2, output: o, args: [x]}, {name: b, ranks: 2, output: o/b, "
          "args: [y]}]"),
      {"jobs 'a' and 'b'"});
  has(Refusal("jobs: [{name: a, ranks: 2, run: {workload: w}, bench: {}}]"),
      {"job 'a'", "exactly one of run"});
  has(Refusal("jobs: [{name: a, ranks: 2, run: {channels: 2}}]"), {"run: needs workload"});
  has(Refusal("jobs: [{name: a, ranks: 2, placement: spread, args: [x]}]"),
      {"placement: 'spread' is not packed"});
  has(Refusal("jobs: [{name: a, ranks: 2, start: soon, args: [x]}]"), {"job 'a'", "start:"});
  has(Refusal("jobs: [{name: 'a/b', ranks: 2, args: [x]}]"), {"name: 'a/b'"});
  has(Refusal("jobs: [{name: t, type: traffic, pairs: [[h0, h9]], duration: 1s}]"),
      {"job 't'", "pairs: [h0, h9]", "no host 'h9'"});
  has(Refusal("jobs: [{name: t, type: traffic, pairs: [h0, h1]}]"), {"every pair is"});
  has(Refusal("jobs: [{name: t, type: traffic, ranks: 2, pairs: [[h0, h1]]}]"),
      {"ranks: only for workload jobs"});
  has(Refusal("jobs: [{name: t, type: traffic, pairs: [[h0, h1]], on: 1s}]"), {"on/off"});
  has(Refusal("jobs: [{name: a, ranks: 2, duration: 1s, args: [x]}]"),
      {"duration: only for traffic jobs"});
  has(Refusal("jobs: [{name: a, ranks: 2, placement: [h0, h8], args: [x]}]"),
      {"job 'a'", "no host 'h8'"});
  has(Refusal("slots_per_host: 1\njobs: [{name: a, ranks: 6, args: [x]}, {name: b, ranks: 4, "
              "placement: packed, args: [x]}]"),
      {"job 'b'", "more hosts than the testbed has", "2 free slot"});
  has(Refusal("slots_per_host: 1\njobs: [{name: a, ranks: 9, args: [x]}]"),
      {"job 'a'", "9 ranks need more hosts than the testbed has"});
  has(Refusal("jobs: [{name: a, ranks: 2, iterations: 2, run: {workload: w, iterations: 3}}]"),
      {"iterations is given twice"});
  has(Refusal("jobs: []"), {"jobs: a list"});
  has(Refusal("jobs: [{name: a, ranks: 2, args: [x]"), {kPath, "not YAML"});
}

// LoadJobsSpec finds each run job's workload: its ranks come from it, or must agree with it.
TEST(JobsSpecTest, RunJobsRanksAreTheirWorkloads) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("genie-jobs-spec-" + std::to_string(getpid()));
  fs::create_directories(dir / "w");
  for (int r = 0; r < 4; ++r) std::ofstream(dir / "w" / ("w." + std::to_string(r) + ".et"));
  auto load = [&](const std::string& text) {
    std::ofstream(dir / "jobs.yml") << text;
    return LoadJobsSpec((dir / "jobs.yml").string());
  };
  auto ok = load("jobs: [{name: a, run: {workload: w}}, {name: b, ranks: 4, run: {workload: w}}]");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->jobs[0].ranks, 4);
  EXPECT_EQ(ok->jobs[0].workload, (dir / "w").string());
  auto wrong = load("jobs: [{name: a, ranks: 8, run: {workload: w}}]");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("job 'a': ranks: 8, but workload"), std::string::npos)
      << wrong.status().message();
  EXPECT_NE(wrong.status().message().find("has 4"), std::string::npos);
  auto missing = load("jobs: [{name: a, run: {workload: nowhere}}]");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("job 'a': run: workload:"), std::string::npos)
      << missing.status().message();
  // Without the workload read (ParseJobsSpec alone), placement refuses the unknown count.
  auto parsed = ParseJobsSpec("jobs: [{name: a, run: {workload: w}}]", kPath);
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(PlaceJobs(Hosts(2), 1, &*parsed).ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace genie::driver
