#include "genie/driver/bench_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "genie/collective/buffer_layout.h"
#include "genie/common/checked_math.h"
#include "genie/launch/local_launcher.h"

namespace genie::driver {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Result<std::vector<int>> ParseDims(const std::string& t, int ranks) {
  std::vector<int> dims;
  int product = 1;
  size_t pos = 0;
  while (true) {
    const size_t x = t.find('x', pos);
    const std::string part = t.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    int v = 0;
    if (!part.empty() && part.size() < 6 &&
        std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(c) != 0; })) {
      v = std::atoi(part.c_str());
    }
    if (v <= 0) return Status::InvalidArgument("--topology '" + t + "': expected e.g. 2x2");
    dims.push_back(v);
    product *= v;
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  if (product != ranks) {
    return Status::InvalidArgument(fmt::format(
        "--topology {} has {} ranks but the job has {}; make them agree", t, product, ranks));
  }
  return dims;
}

}  // namespace

std::optional<BenchDatatype> ParseBenchDatatype(const std::string& text) {
  static const std::pair<const char*, BenchDatatype> kTypes[] = {
      {"int8", {"int8", 1}},     {"char", {"int8", 1}},      {"uint8", {"uint8", 1}},
      {"int32", {"int32", 4}},   {"int", {"int32", 4}},      {"uint32", {"uint32", 4}},
      {"int64", {"int64", 8}},   {"uint64", {"uint64", 8}},  {"half", {"half", 2}},
      {"float16", {"half", 2}},  {"float", {"float", 4}},    {"float32", {"float", 4}},
      {"double", {"double", 8}}, {"float64", {"double", 8}}, {"bfloat16", {"bfloat16", 2}},
      {"f8e4m3", {"f8e4m3", 1}}, {"f8e5m2", {"f8e5m2", 1}},
  };
  const std::string t = Lower(text);
  for (const auto& [name, type] : kTypes) {
    if (t == name) return type;
  }
  return std::nullopt;
}

collective::CollectiveSpec BenchSpec(const BenchPlan& plan, size_t index, int ranks) {
  collective::CollectiveSpec spec;
  spec.type = plan.info.type;
  spec.size = CommSize(plan.info.type, plan.sizes[index], ranks);
  spec.group.resize(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) spec.group[static_cast<size_t>(r)] = r;
  spec.root = plan.info.root;
  spec.options = plan.plan;
  return spec;
}

Result<Bytes> BenchCheckBytes(const BenchPlan& plan, int ranks, int rank) {
  if (!plan.info.check) return Bytes{0};
  // Buffers grow with the size: the largest size the check runs on (float32 elements) decides.
  for (size_t i = plan.sizes.size(); i-- > 0;) {
    const collective::CollectiveSpec spec = BenchSpec(plan, i, ranks);
    if (spec.size % 4 != 0) continue;
    GENIE_ASSIGN_OR_RETURN(collective::Schedule schedule, collective::Plan(spec, rank));
    Bytes largest_receive = 0;
    for (const auto& step : schedule.steps) {
      largest_receive = std::max<Bytes>(largest_receive, step.recv.length);
    }
    return SaturatingAdd(collective::Layout(spec, rank).buffer_bytes, largest_receive);
  }
  return Bytes{0};
}

Bytes SizeUnit(CollectiveType type, int type_size, int ranks) {
  const Bytes unit = static_cast<Bytes>(std::max(1, type_size));
  return report::BenchCountsPerRank(type) ? unit * static_cast<Bytes>(std::max(1, ranks)) : unit;
}

Bytes CommSize(CollectiveType type, Bytes size, int ranks) {
  if (type == CollectiveType::kAllGather || type == CollectiveType::kGather) {
    return size / static_cast<Bytes>(std::max(1, ranks));
  }
  return size;
}

std::vector<Bytes> SweepSizes(Bytes min, Bytes max, int factor, Bytes step, Bytes unit) {
  std::vector<Bytes> sizes;
  if (unit == 0) unit = 1;
  for (Bytes size = min; size <= max;) {
    const Bytes aligned = std::max(unit, size / unit * unit);
    if (sizes.empty() || sizes.back() != aligned) sizes.push_back(aligned);
    const Bytes next = factor > 1 ? size * static_cast<Bytes>(factor) : size + step;
    if (next <= size) break;  // overflow, or a step of 0
    size = next;
  }
  return sizes;
}

Result<BenchPlan> ResolveBench(const BenchOptions& o, int ranks) {
  BenchPlan p;
  report::BenchInfo& info = p.info;
  info.ranks = ranks;
  CollectiveType type;
  if (!collective::ParseCollectiveOp(o.collective, &type) || type == CollectiveType::kBarrier) {
    return Status::InvalidArgument(
        "unknown collective '" + o.collective +
        "': all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather, "
        "scatter or reduce_scatter_block");
  }
  info.type = type;
  auto dt = ParseBenchDatatype(o.datatype);
  if (!dt) {
    return Status::InvalidArgument(
        "-d '" + o.datatype +
        "': int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16, f8e4m3 or "
        "f8e5m2");
  }
  info.datatype = dt->name;
  info.type_size = dt->size;
  if (Lower(o.op) != "sum") {
    return Status::Unsupported("-o '" + o.op +
                               "': genie reduces by summing (its data check sums float "
                               "elements); use -o sum");
  }
  info.op = "sum";
  if (o.root < 0 || o.root >= ranks) {
    return Status::InvalidArgument(
        fmt::format("-r {}: the root must be a rank of the job, 0 to {}", o.root, ranks - 1));
  }
  info.root = o.root;
  GENIE_ASSIGN_OR_RETURN(info.min_bytes, ParseBytes(o.min_bytes));
  GENIE_ASSIGN_OR_RETURN(info.max_bytes, ParseBytes(o.max_bytes));
  GENIE_ASSIGN_OR_RETURN(info.step_bytes, ParseBytes(o.step_bytes));
  if (info.max_bytes < info.min_bytes) {
    return Status::InvalidArgument(fmt::format(
        "-e {} is smaller than -b {}: give the largest size to -e", o.max_bytes, o.min_bytes));
  }
  if (o.step_factor < 1) return Status::InvalidArgument("-f must be at least 1");
  if (o.step_factor == 1 && info.step_bytes == 0 && info.max_bytes > info.min_bytes) {
    return Status::InvalidArgument("-i 0 with -f 1 never reaches -e: give -f 2 or -i BYTES");
  }
  info.step_factor = o.step_factor;
  if (o.iters < 1) return Status::InvalidArgument("-n must be at least 1");
  if (o.warmup < 0) return Status::InvalidArgument("-w must be 0 or more");
  info.iters = o.iters;
  info.warmup = o.warmup;
  info.check = o.check != 0;
  if (o.average < 0 || o.average > 3) {
    return Status::InvalidArgument("-a takes 0 (rank 0), 1 (mean), 2 (min) or 3 (max)");
  }
  info.average = static_cast<report::BenchAverage>(o.average);
  info.testbed = o.testbed;

  // The planner's options, as `genie run` sets them without a system.json (run_setup.cc).
  p.plan.algorithms.clear();
  std::string names = o.algorithm;
  for (size_t pos = 0; pos <= names.size();) {
    size_t comma = names.find(',', pos);
    if (comma == std::string::npos) comma = names.size();
    collective::Algorithm a;
    int window = 0;
    const std::string name = names.substr(pos, comma - pos);
    if (!collective::ParseAlgorithm(name, &a, &window)) {
      return Status::InvalidArgument("--algorithm '" + name +
                                     "' is not a planner algorithm (docs/algorithms.md)");
    }
    if (a == collective::Algorithm::kCustom) {
      return Status::Unsupported(
          "--algorithm custom needs its algorithm file, which a system.json names: run it with "
          "`genie run --system`");
    }
    p.plan.algorithms.push_back(a);
    if (window > 0) p.plan.direct_window = window;
    pos = comma + 1;
  }
  info.algorithm = o.algorithm;
  if (!o.topology.empty()) {
    GENIE_ASSIGN_OR_RETURN(p.plan.dims, ParseDims(o.topology, ranks));
  }
  if (p.plan.algorithms.size() > 1 &&
      p.plan.algorithms.size() != std::max<size_t>(1, p.plan.dims.size())) {
    return Status::InvalidArgument(
        fmt::format("--algorithm names {} algorithms: give one, or one per --topology dimension",
                    p.plan.algorithms.size()));
  }
  if (o.chunks < 1) return Status::InvalidArgument("--chunks must be at least 1");
  if (o.channels < 1) return Status::InvalidArgument("--channels must be at least 1");
  p.plan.chunks = o.chunks;
  p.plan.active_chunks = 1;
  p.plan.channels = o.channels;
  info.chunks = o.chunks;
  info.channels = o.channels;
  if (!o.slice.empty()) {
    GENIE_ASSIGN_OR_RETURN(p.plan.slice_bytes, ParseBytes(o.slice));
  }
  p.sizes = SweepSizes(info.min_bytes, info.max_bytes, info.step_factor, info.step_bytes,
                       SizeUnit(type, info.type_size, ranks));
  p.min_busbw = o.min_busbw;
  if (!o.expect.empty()) {
    GENIE_ASSIGN_OR_RETURN(uint64_t bits, ParseBitRate(o.expect));
    p.expect_gbps = static_cast<double>(bits) / 8e9;
  }
  if (o.expect_fraction <= 0 || o.expect_fraction > 1) {
    return Status::InvalidArgument("--expect-fraction must be in (0, 1]");
  }
  p.expect_fraction = o.expect_fraction;
  return p;
}

nlohmann::json BenchVerdict::ToJson(const BenchPlan& plan) const {
  nlohmann::json j = {{"pass", exit_code == 0}, {"failures", failures}};
  if (plan.min_busbw >= 0) j["min_busbw_gbps"] = plan.min_busbw;
  if (plan.expect_gbps >= 0) {
    j["expect_gbps"] = plan.expect_gbps;
    j["expect_fraction"] = plan.expect_fraction;
  }
  return j;
}

BenchVerdict JudgeBench(const BenchPlan& plan, const std::vector<report::BenchRow>& rows) {
  BenchVerdict v;
  const int64_t wrong = report::TotalWrong(rows);
  if (wrong > 0) {
    std::string sizes;
    for (const auto& r : rows) {
      if (r.wrong > 0) sizes += (sizes.empty() ? "" : ", ") + std::to_string(r.size);
    }
    v.failures.push_back(fmt::format(
        "#wrong: {} element(s) held a wrong value after the collective (sizes {} B): the data "
        "were corrupted on the way",
        wrong, sizes));
  }
  const double avg = report::AvgBusBw(rows);
  if (plan.min_busbw >= 0 && avg < plan.min_busbw) {
    v.failures.push_back(fmt::format(
        "Avg bus bandwidth {:.6g} GB/s is below --min-busbw {:.6g} GB/s", avg, plan.min_busbw));
  }
  if (plan.expect_gbps >= 0 && !rows.empty()) {
    const auto& last = rows.back();
    const double floor = plan.expect_gbps * plan.expect_fraction;
    if (last.busbw_gbps < floor) {
      v.failures.push_back(fmt::format(
          "busbw at {} B is {:.6g} GB/s, below {} x the expected {:.6g} GB/s (--expect) = {:.6g} "
          "GB/s",
          last.size, last.busbw_gbps, plan.expect_fraction, plan.expect_gbps, floor));
    }
  }
  v.exit_code = v.failures.empty() ? 0 : launch::kExitFailed;
  return v;
}

}  // namespace genie::driver
