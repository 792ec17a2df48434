// genie bench's pure parts: the size sweep, nccl-tests' size vs the planner's comm_size, flag
// resolution and the verdict; and the #wrong count it takes from runtime/verify_data.
#include "genie/driver/bench_plan.h"

#include <gtest/gtest.h>

#include <cstring>

#include "genie/collective/buffer_layout.h"
#include "genie/runtime/verify_data.h"

namespace genie::driver {
namespace {

using CT = CollectiveType;

TEST(BenchTest, SweepMultipliesOrAddsLikeNcclTests) {
  EXPECT_EQ(SweepSizes(1024, 8192, 2, 0, 4), (std::vector<Bytes>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(SweepSizes(1024, 9000, 2, 0, 4), (std::vector<Bytes>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(SweepSizes(1000, 3000, 1, 1000, 4), (std::vector<Bytes>{1000, 2000, 3000}));
  EXPECT_EQ(SweepSizes(64 << 20, 64 << 20, 1, 1 << 20, 4), (std::vector<Bytes>{64 << 20}));
  // -b 1K -e 64M -f 2: 17 sizes.
  EXPECT_EQ(SweepSizes(1024, 64 << 20, 2, 0, 4).size(), 17u);
}

TEST(BenchTest, SweepAlignsToTheUnitAndDropsRepeats) {
  // 8 ranks of all-gather floats: 32-byte steps; 1, 2, 4 ... 16 all become 32.
  EXPECT_EQ(SweepSizes(1, 128, 2, 0, 32), (std::vector<Bytes>{32, 64, 128}));
  EXPECT_EQ(SweepSizes(100, 100, 1, 0, 32), (std::vector<Bytes>{96}));
  // A size that would overflow ends the sweep.
  EXPECT_EQ(SweepSizes(1ull << 62, ~0ull, 4, 0, 1).size(), 1u);
}

TEST(BenchTest, UnitAndCommSizeFollowTheBufferEachCallTakes) {
  EXPECT_EQ(SizeUnit(CT::kAllReduce, 4, 8), 4u);
  EXPECT_EQ(SizeUnit(CT::kBroadcast, 8, 8), 8u);
  EXPECT_EQ(SizeUnit(CT::kAllGather, 4, 8), 32u);
  EXPECT_EQ(SizeUnit(CT::kReduceScatter, 2, 4), 8u);
  EXPECT_EQ(SizeUnit(CT::kAllToAll, 4, 4), 16u);
  // nccl-tests' size is all-gather's whole output; the planner takes one rank's input.
  EXPECT_EQ(CommSize(CT::kAllGather, 4096, 4), 1024u);
  EXPECT_EQ(CommSize(CT::kGather, 4096, 4), 1024u);
  EXPECT_EQ(CommSize(CT::kReduceScatter, 4096, 4), 4096u);
  EXPECT_EQ(CommSize(CT::kAllToAll, 4096, 4), 4096u);
  EXPECT_EQ(CommSize(CT::kAllReduce, 4096, 4), 4096u);
}

TEST(BenchTest, ResolveTakesNcclTestsFlags) {
  BenchOptions o;
  o.collective = "all_gather";
  o.min_bytes = "1K";
  o.max_bytes = "64K";
  o.step_factor = 4;
  o.datatype = "double";
  o.algorithm = "direct";
  o.channels = 2;
  o.expect = "400mbit";
  auto p = ResolveBench(o, 4);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->info.type, CT::kAllGather);
  EXPECT_EQ(p->info.type_size, 8);
  EXPECT_EQ(p->sizes, (std::vector<Bytes>{1024, 4096, 16384, 65536}));
  EXPECT_EQ(p->plan.algorithms,
            (std::vector<collective::Algorithm>{collective::Algorithm::kDirect}));
  EXPECT_EQ(p->plan.channels, 2);
  EXPECT_DOUBLE_EQ(p->expect_gbps, 0.05);
  o.algorithm = "ring,direct";
  o.topology = "2x2";
  p = ResolveBench(o, 4);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->plan.dims, (std::vector<int>{2, 2}));
  EXPECT_EQ(ParseBenchDatatype("FLOAT32")->name, "float");
  EXPECT_FALSE(ParseBenchDatatype("complex"));
}

TEST(BenchTest, ResolveRefusesWhatItCannotRunNamingTheFlag) {
  auto refused = [](auto edit, const std::string& names) {
    BenchOptions o;
    edit(o);
    auto p = ResolveBench(o, 4);
    ASSERT_FALSE(p.ok()) << names;
    EXPECT_NE(p.status().message().find(names), std::string::npos) << p.status().message();
  };
  refused([](BenchOptions& o) { o.collective = "all_scream"; }, "unknown collective");
  refused([](BenchOptions& o) { o.collective = "barrier"; }, "unknown collective");
  refused([](BenchOptions& o) { o.op = "max"; }, "-o 'max'");
  refused([](BenchOptions& o) { o.datatype = "complex"; }, "-d 'complex'");
  refused([](BenchOptions& o) { o.root = 4; }, "-r 4");
  refused([](BenchOptions& o) { o.max_bytes = "1K"; }, "-e 1K is smaller than -b");
  refused([](BenchOptions& o) { o.topology = "2x3"; }, "--topology 2x3 has 6 ranks");
  refused([](BenchOptions& o) { o.algorithm = "zigzag"; }, "--algorithm 'zigzag'");
  refused([](BenchOptions& o) { o.algorithm = "custom"; }, "--algorithm custom");
  refused([](BenchOptions& o) { o.algorithm = "ring,ring"; }, "one per --topology dimension");
  refused([](BenchOptions& o) { o.expect = "fast"; }, "link rate");
  refused(
      [](BenchOptions& o) {
        o.max_bytes = "64M";
        o.step_bytes = "0";
      },
      "-i 0");
}

TEST(BenchTest, VerdictFailsOnWrongDataAndLowBandwidthOnly) {
  BenchPlan plan;
  std::vector<report::BenchRow> rows(2);
  rows[0].size = 1024;
  rows[0].busbw_gbps = 0.01;
  rows[0].wrong = 0;
  rows[1].size = 64 << 20;
  rows[1].busbw_gbps = 0.045;
  rows[1].wrong = 0;
  EXPECT_EQ(JudgeBench(plan, rows).exit_code, 0);  // nothing asked for
  plan.min_busbw = 0.0275;                         // the footer: (0.01 + 0.045) / 2
  EXPECT_EQ(JudgeBench(plan, rows).exit_code, 0);
  plan.min_busbw = 0.03;
  BenchVerdict v = JudgeBench(plan, rows);
  EXPECT_EQ(v.exit_code, 1);
  ASSERT_EQ(v.failures.size(), 1u);
  EXPECT_NE(v.failures[0].find("below --min-busbw 0.03"), std::string::npos) << v.failures[0];
  plan.min_busbw = -1;
  plan.expect_gbps = 0.05;  // 400mbit: the largest size must reach 0.8 x 0.05 = 0.04
  EXPECT_EQ(JudgeBench(plan, rows).exit_code, 0);
  plan.expect_fraction = 0.95;
  v = JudgeBench(plan, rows);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_NE(v.failures[0].find("--expect"), std::string::npos) << v.failures[0];
  plan.expect_gbps = -1;
  rows[1].wrong = 2;
  v = JudgeBench(plan, rows);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_NE(v.failures[0].find("#wrong: 2"), std::string::npos) << v.failures[0];
  EXPECT_EQ(v.ToJson(plan)["pass"], false);
}

TEST(BenchTest, CountWrongCountsEveryWrongElement) {
  collective::CollectiveSpec spec;
  spec.type = CT::kAllReduce;
  spec.size = 4096;
  spec.group = {0, 1, 2, 3};
  collective::BufferLayout layout = collective::Layout(spec, 1);
  // The right result: every final region holds its expected pattern.
  std::vector<uint8_t> buffer(layout.buffer_bytes);
  for (const auto& region : layout.final) {
    for (Bytes i = 0; i + 4 <= region.range.length; i += 4) {
      const float v = collective::ExpectedElement(region, region.range.offset + i);
      std::memcpy(buffer.data() + region.range.offset + i, &v, 4);
    }
  }
  EXPECT_EQ(runtime::CountWrong(layout.final, buffer), 0u);
  EXPECT_TRUE(runtime::CheckFinal(layout.final, buffer, "x").ok());
  buffer[0] ^= 0x40;
  buffer[4000] ^= 0x01;
  EXPECT_EQ(runtime::CountWrong(layout.final, buffer), 2u);
  // Each rank's own data alone is not the sum: every element is wrong.
  runtime::FillInitial(layout, buffer);
  EXPECT_EQ(runtime::CountWrong(layout.final, buffer), 1024u);
}

TEST(BenchTest, TheDataCheckIsSizedBeforeAnythingIsSent) {
  BenchOptions o;
  o.min_bytes = "1M";
  o.max_bytes = "4M";
  o.step_factor = 2;
  auto p = ResolveBench(o, 2);
  ASSERT_TRUE(p.ok()) << p.status().message();
  // The largest size's data plus its largest receive: more than the size, not absurdly more.
  auto need = BenchCheckBytes(*p, 2, 0);
  ASSERT_TRUE(need.ok()) << need.status().message();
  EXPECT_GE(*need, Bytes{4} << 20);
  EXPECT_LE(*need, Bytes{16} << 20);
  // -b 1T: a need no machine here holds, known without sending a byte.
  o.min_bytes = o.max_bytes = "1T";
  auto big = ResolveBench(o, 2);
  ASSERT_TRUE(big.ok()) << big.status().message();
  auto big_need = BenchCheckBytes(*big, 2, 1);
  ASSERT_TRUE(big_need.ok());
  EXPECT_GE(*big_need, Bytes{1} << 40);
  // -c 0: nothing is checked, nothing held.
  o.check = 0;
  auto unchecked = ResolveBench(o, 2);
  ASSERT_TRUE(unchecked.ok());
  EXPECT_EQ(*BenchCheckBytes(*unchecked, 2, 0), 0u);
}

}  // namespace
}  // namespace genie::driver
