#include "genie/compute/compute_model.h"

#include <gtest/gtest.h>

namespace genie::compute {
namespace {

Op Comp(TimeNs duration, uint64_t num_ops = 0, uint64_t tensor_size = 0, bool cpu = false) {
  Op op;
  op.kind = OpKind::kCompute;
  op.duration_ns = duration;
  op.num_ops = num_ops;
  op.tensor_size = tensor_size;
  op.is_cpu_op = cpu;
  return op;
}

TEST(ComputeModel, ReplaysDurationsByDefault) {
  ComputeModel m({});
  EXPECT_EQ(m.Duration(Comp(5000)), 5000);
  EXPECT_EQ(m.Duration(Comp(0)), 1);  // ASTRA-sim: a zero duration still takes 1 ns
}

TEST(ComputeModel, DefaultRooflineForNodesWithoutDuration) {
  ComputeParams p;
  p.peak_tflops = 100;       // 1e14 FLOP/s
  p.local_mem_bw_gbps = 1000;  // 1e12 B/s
  ComputeModel m(p);
  // intensity 1000 FLOP/B: memory roof 1e15 > peak 1e14 -> compute bound: 1e12 / 1e14 s = 10 ms
  EXPECT_EQ(m.Duration(Comp(0, 1'000'000'000'000, 1'000'000'000)), 10'000'000);
  // intensity 1: memory bound at 1e12 FLOP/s: 1e9 FLOP -> 1 ms
  EXPECT_EQ(m.Duration(Comp(0, 1'000'000'000, 1'000'000'000)), 1'000'000);
}

TEST(ComputeModel, ExplicitRooflineIgnoresDurationForGpuOps) {
  ComputeParams p;
  p.roofline_enabled = true;
  p.peak_tflops = 100;
  p.local_mem_bw_gbps = 1000;
  ComputeModel m(p);
  EXPECT_EQ(m.Duration(Comp(5000, 1'000'000'000, 1'000'000'000)), 1'000'000);
  EXPECT_EQ(m.Duration(Comp(5000, 1'000'000'000, 0)), 0);
  EXPECT_EQ(m.Duration(Comp(5000, 1'000'000'000, 1'000'000'000, /*cpu=*/true)), 5000);
}

TEST(ComputeModel, ExplicitlyDisabledRooflineReplays) {
  ComputeParams p;
  p.roofline_enabled = false;
  ComputeModel m(p);
  EXPECT_EQ(m.Duration(Comp(0, 1'000'000'000, 1'000'000'000)), 1);
}

}  // namespace
}  // namespace genie::compute
