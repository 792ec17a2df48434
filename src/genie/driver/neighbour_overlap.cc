#include "genie/driver/neighbour_overlap.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "genie/record/record_stream.h"
#include "genie/report/statistics.h"

namespace genie::driver {

std::vector<Interval> MergeIntervals(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.second <= i.first; });
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

double OverlapShare(const Interval& step, const std::vector<Interval>& busy) {
  if (step.second <= step.first) return 0;
  TimeNs covered = 0;
  for (const Interval& b : busy) {
    if (b.first >= step.second) break;
    covered += std::max<TimeNs>(0, std::min(step.second, b.second) - std::max(step.first, b.first));
  }
  return static_cast<double>(covered) / static_cast<double>(step.second - step.first);
}

std::vector<Interval> IterationIntervals(const std::vector<record::RankSummary>& ranks) {
  std::map<int, Interval> by_iteration;  // report::StepTimes leaves the warm-ups out
  for (const record::RankSummary& s : ranks) {
    auto [it, inserted] = by_iteration.try_emplace(s.iteration, s.start, s.finish);
    if (!inserted) {
      it->second.first = std::min(it->second.first, s.start);
      it->second.second = std::max(it->second.second, s.finish);
    }
  }
  std::vector<Interval> out;
  for (const auto& [iteration, step] : by_iteration) out.push_back(step);
  return out;
}

std::optional<std::vector<Interval>> RecordedActivity(const std::string& folder) {
  std::vector<record::RankSummary> ranks;
  bool complete = true;
  int streams = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("rank-", 0) != 0 || entry.path().extension() != ".jsonl") continue;
    auto stream = record::ReadRecordStream(entry.path().string());
    if (!stream.ok() || stream->ranks.empty()) continue;
    ++streams;
    // A stream whose last iteration is not its header's last is a rank still running.
    int last = std::numeric_limits<int>::min();
    for (const record::RankSummary& r : stream->ranks) last = std::max(last, r.iteration);
    const nlohmann::json& h = stream->header;
    if (!h.is_object() || !h.contains("iterations") || !h["iterations"].is_number_integer() ||
        last < h["iterations"].get<int>() - 1) {
      complete = false;
    }
    ranks.insert(ranks.end(), stream->ranks.begin(), stream->ranks.end());
  }
  if (streams == 0) return std::nullopt;
  std::vector<Interval> steps = IterationIntervals(ranks);
  if (!complete && !steps.empty()) {
    steps.emplace_back(steps.back().second, std::numeric_limits<TimeNs>::max());
  }
  return MergeIntervals(std::move(steps));
}

std::map<int, TimeNs> ScaledInterference(const std::vector<TimeNs>& simulated_ns,
                                         const std::vector<double>& simulated_overlap,
                                         const std::map<int, double>& measured_overlap) {
  const size_t n = std::min(simulated_ns.size(), simulated_overlap.size());
  std::vector<double> per_overlap(n, std::nan(""));
  std::vector<TimeNs> usable;
  for (size_t i = 0; i < n; ++i) {
    if (simulated_overlap[i] < kMinSimulatedOverlap) continue;
    per_overlap[i] = static_cast<double>(simulated_ns[i]) / simulated_overlap[i];
    usable.push_back(static_cast<TimeNs>(std::llround(per_overlap[i])));
  }
  if (usable.empty()) return {};
  const auto median = static_cast<double>(report::SpreadOf(usable).median);
  std::map<int, TimeNs> out;
  for (const auto& [iteration, share] : measured_overlap) {
    const auto i = static_cast<size_t>(iteration);
    const double full =
        iteration >= 0 && i < n && !std::isnan(per_overlap[i]) ? per_overlap[i] : median;
    out[iteration] = static_cast<TimeNs>(std::llround(full * share));
  }
  return out;
}

TimeNs FilledIdle(TimeNs own_ns, TimeNs probe_ns, TimeNs simulated_alone_ns, double share,
                  TimeNs added_ns) {
  if (added_ns <= 0 || share <= 0) return 0;
  const TimeNs idle = std::max<TimeNs>(0, own_ns - std::max<TimeNs>(0, probe_ns) - simulated_alone_ns);
  const auto filled = static_cast<TimeNs>(std::llround(static_cast<double>(idle) * std::min(share, 1.0)));
  return std::min(added_ns, filled);
}

}  // namespace genie::driver
