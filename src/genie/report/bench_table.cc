#include "genie/report/bench_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "genie/report/bandwidth.h"

namespace genie::report {
namespace {

bool Rooted(CollectiveType type) {
  return type == CollectiveType::kBroadcast || type == CollectiveType::kReduce ||
         type == CollectiveType::kGather || type == CollectiveType::kScatter;
}

bool Reduces(CollectiveType type) {
  return type == CollectiveType::kAllReduce || type == CollectiveType::kReduce ||
         type == CollectiveType::kReduceScatter || type == CollectiveType::kReduceScatterBlock;
}

// nccl-tests' time format: fewer decimals as the figure grows, always 7 wide.
std::string Time(double us) {
  if (us >= 10000.0) return fmt::format("{:7.0f}", us);
  if (us >= 100.0) return fmt::format("{:7.1f}", us);
  return fmt::format("{:7.2f}", us);
}

// nccl-tests prints GB/s with 2 decimals; genie's links are often well under 1 GB/s (400 Mbit/s
// is 0.05 GB/s), where 2 decimals would hide the figure, so small values get 4.
std::string Bw(double gbps) {
  if (gbps >= 100.0) return fmt::format("{:6.1f}", gbps);
  if (gbps >= 1.0) return fmt::format("{:6.2f}", gbps);
  return fmt::format("{:6.4f}", gbps);
}

// Comparing doubles in sort: NaN never appears (times are finite), so < is a strict order.
double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Nearest rank: the smallest value with at least p of the values at or below it.
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

const char* AverageName(BenchAverage a) {
  switch (a) {
    case BenchAverage::kRank0:
      return "rank 0's time";
    case BenchAverage::kMean:
      return "mean of the ranks' times";
    case BenchAverage::kMin:
      return "fastest rank's time";
    case BenchAverage::kMax:
      return "slowest rank's time";
  }
  return "";
}

}  // namespace

bool BenchCountsPerRank(CollectiveType type) {
  switch (type) {
    case CollectiveType::kAllGather:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kAllToAll:
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
      return true;
    default:
      return false;
  }
}

uint64_t BenchCount(CollectiveType type, Bytes size, int type_size, int n) {
  if (type_size <= 0 || n <= 0) return 0;
  uint64_t count = size / static_cast<uint64_t>(type_size);
  if (BenchCountsPerRank(type)) count /= static_cast<uint64_t>(n);
  return count;
}

std::string BenchRedop(CollectiveType type, const std::string& op) {
  return Reduces(type) ? op : "none";
}

int BenchRoot(CollectiveType type, int root) { return Rooted(type) ? root : -1; }

BenchRow MakeBenchRow(const BenchInfo& info, Bytes size, const std::vector<double>& rank_us,
                      const std::vector<std::vector<double>>& per_iteration, int64_t wrong) {
  BenchRow row;
  row.size = size;
  row.count = BenchCount(info.type, size, info.type_size, info.ranks);
  row.wrong = wrong;
  const std::vector<double>& means = rank_us;
  size_t iterations = 0;
  for (const auto& times : per_iteration) iterations = std::max(iterations, times.size());
  if (!means.empty()) {
    switch (info.average) {
      case BenchAverage::kRank0:
        row.time_us = means[0];
        break;
      case BenchAverage::kMean:
        row.time_us =
            std::accumulate(means.begin(), means.end(), 0.0) / static_cast<double>(means.size());
        break;
      case BenchAverage::kMin:
        row.time_us = *std::min_element(means.begin(), means.end());
        break;
      case BenchAverage::kMax:
        row.time_us = *std::max_element(means.begin(), means.end());
        break;
    }
  }
  if (row.time_us > 0) {
    // size is nccl-tests' S already: algbw = S / t (bytes per µs / 1e3 = GB/s).
    row.algbw_gbps = static_cast<double>(size) / row.time_us / 1e3;
    row.busbw_gbps = row.algbw_gbps * BusBwFactor(info.type, info.ranks);
  }
  std::vector<double> slowest(iterations, 0.0);
  for (const auto& times : per_iteration) {
    for (size_t i = 0; i < times.size(); ++i) slowest[i] = std::max(slowest[i], times[i]);
  }
  if (!slowest.empty()) {
    row.min_us = *std::min_element(slowest.begin(), slowest.end());
    row.max_us = *std::max_element(slowest.begin(), slowest.end());
    row.p99_us = Percentile(slowest, 0.99);
  }
  return row;
}

std::string BenchHeaderText(const BenchInfo& info) {
  std::string s;
  s += fmt::format("# genie bench: {}, {} ranks, algorithm {}, {} chunk(s), {} channel(s){}\n",
                   CollectiveTypeName(info.type), info.ranks, info.algorithm, info.chunks,
                   info.channels, info.testbed.empty() ? "" : ", testbed " + info.testbed);
  std::string step = info.step_factor > 1 ? fmt::format("{}(factor)", info.step_factor)
                                          : fmt::format("{}(bytes)", info.step_bytes);
  s += fmt::format(
      "#  minBytes {} maxBytes {} step: {} warmup iters: {} iters: {} agg iters: 1 "
      "validation: {} \n",
      info.min_bytes, info.max_bytes, step, info.warmup, info.iters, info.check ? 1 : 0);
  const int root = BenchRoot(info.type, info.root);
  s += fmt::format("#  datatype {} ({} B)  op {}{}  time: {} (-a {})\n", info.datatype,
                   info.type_size, BenchRedop(info.type, info.op),
                   root < 0 ? "" : fmt::format("  root {}", root), AverageName(info.average),
                   static_cast<int>(info.average));
  s += "#  in-place and out-of-place are the same in genie (one working buffer, the same messages "
       "on the wire): one group is shown\n";
  s += "#  jitter: one iteration's time as its slowest rank saw it, over the timed iterations\n";
  s += "#\n";
  // Group labels centred over their columns: 52 characters of size..root, then 4 columns of
  // 9 (time, algbw, busbw, #wrong; 33 with their separators) and 3 of 9 (jitter).
  s += fmt::format("#{:51}{:^33}{:^27}\n", "", "in-place = out-of-place", "jitter");
  s += fmt::format(
      "#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  "
      "{:>7}  {:>7}\n",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "min", "p99",
      "max");
  s += fmt::format(
      "#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  "
      "{:>7}  {:>7}\n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)");
  return s;
}

std::string BenchRowText(const BenchInfo& info, const BenchRow& row) {
  return fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {}  {}  {}  {:>6}  {}  {}  {}\n",
                     row.size, row.count, info.datatype, BenchRedop(info.type, info.op),
                     BenchRoot(info.type, info.root), Time(row.time_us), Bw(row.algbw_gbps),
                     Bw(row.busbw_gbps),
                     row.wrong < 0 ? std::string("N/A") : fmt::format("{}", row.wrong),
                     Time(row.min_us), Time(row.p99_us), Time(row.max_us));
}

double AvgBusBw(const std::vector<BenchRow>& rows) {
  if (rows.empty()) return 0;
  double sum = 0;
  for (const auto& r : rows) sum += r.busbw_gbps;
  return sum / static_cast<double>(rows.size());
}

int64_t TotalWrong(const std::vector<BenchRow>& rows) {
  int64_t total = -1;
  for (const auto& r : rows) {
    if (r.wrong < 0) continue;
    total = std::max<int64_t>(total, 0) + r.wrong;
  }
  return total;
}

std::string BenchFooterText(const BenchInfo& info, const std::vector<BenchRow>& rows) {
  std::string s;
  const int64_t wrong = TotalWrong(rows);
  if (!info.check) {
    s += "# Out of bounds values : N/A (not checked: -c 0)\n";
  } else if (wrong < 0) {
    s += "# Out of bounds values : N/A (no size was whole 4-byte elements)\n";
  } else {
    s += fmt::format("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
  }
  s += fmt::format("# Avg bus bandwidth    : {} \n", fmt::format("{:.6g}", AvgBusBw(rows)));
  s += "#\n";
  return s;
}

nlohmann::json BenchJson(const BenchInfo& info, const std::vector<BenchRow>& rows,
                         const nlohmann::json& verdict) {
  nlohmann::json j;
  j["info"] = {{"collective", CollectiveTypeName(info.type)},
               {"algorithm", info.algorithm},
               {"ranks", info.ranks},
               {"datatype", info.datatype},
               {"type_size", info.type_size},
               {"op", BenchRedop(info.type, info.op)},
               {"root", BenchRoot(info.type, info.root)},
               {"min_bytes", info.min_bytes},
               {"max_bytes", info.max_bytes},
               {"step_factor", info.step_factor},
               {"step_bytes", info.step_bytes},
               {"warmup_iters", info.warmup},
               {"iters", info.iters},
               {"check", info.check},
               {"average", static_cast<int>(info.average)},
               {"channels", info.channels},
               {"chunks", info.chunks},
               {"in_place_same_as_out_of_place", true}};
  if (!info.testbed.empty()) j["info"]["testbed"] = info.testbed;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json row = {{"size", r.size},
                          {"count", r.count},
                          {"type", info.datatype},
                          {"redop", BenchRedop(info.type, info.op)},
                          {"root", BenchRoot(info.type, info.root)},
                          {"time_us", r.time_us},
                          {"algbw_gbps", r.algbw_gbps},
                          {"busbw_gbps", r.busbw_gbps},
                          {"min_us", r.min_us},
                          {"p99_us", r.p99_us},
                          {"max_us", r.max_us}};
    row["wrong"] = r.wrong < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.wrong);
    out.push_back(row);
  }
  j["rows"] = out;
  j["avg_busbw_gbps"] = AvgBusBw(rows);
  const int64_t wrong = TotalWrong(rows);
  j["wrong"] = wrong < 0 ? nlohmann::json(nullptr) : nlohmann::json(wrong);
  j["verdict"] = verdict;
  return j;
}

}  // namespace genie::report
