#include "genie/driver/neighbour_overlap.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "genie/record/event_json.h"
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
  std::vector<Interval> out;
  for (const report::IterationStep& s : report::StepTimes(ranks, /*with_warmups=*/true)) {
    out.emplace_back(s.start, s.finish);
  }
  return out;
}

namespace {

// One rank stream as RecordedActivity needs it: read line by line, parsing only the header,
// the clock record and the rank records (not the ops, which make most of a stream).
struct StreamSteps {
  std::string run_id;
  bool complete = false;  // its last iteration (the header's) recorded
  std::vector<record::RankSummary> ranks;
};
std::optional<StreamSteps> ReadStreamSteps(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  StreamSteps s;
  int iterations = -1;
  TimeNs offset = 0;  // onto the job's rank 0's clock, as results.json's merge moves them
  int last = std::numeric_limits<int>::min();
  auto parse = [](const std::string& text) {
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  };
  while (std::getline(in, line)) {
    if (line.find("\"record\":\"header\"") != std::string::npos) {
      const auto j = parse(line);
      if (j.is_object() && j.contains("run") && j["run"].is_object()) {
        iterations = j["run"].value("iterations", -1);
      }
    } else if (line.find("\"record\":\"clock\"") != std::string::npos) {
      const auto j = parse(line);
      if (!j.is_object()) continue;
      s.run_id = j.value("run_id", std::string());
      if (j.contains("offset_ns") && j["offset_ns"].is_number_integer()) {
        offset = j["offset_ns"].get<TimeNs>();
      }
    } else if (line.find("\"record\":\"rank\"") != std::string::npos) {
      // A line cut short by a rank still writing does not parse.
      auto r = record::RankSummaryFromJson(parse(line));
      if (!r.ok()) continue;
      r->start += offset;
      r->finish += offset;
      last = std::max(last, r->iteration);
      s.ranks.push_back(*r);
    }
  }
  if (s.run_id.empty() && s.ranks.empty()) return std::nullopt;
  s.complete = iterations > 0 && last >= iterations - 1;
  return s;
}

}  // namespace

std::map<int, double> IterationOverlaps(const std::vector<record::RankSummary>& ranks,
                                       const std::vector<Interval>& busy) {
  std::map<int, double> out;
  for (const report::IterationStep& s : report::StepTimes(ranks)) {
    out[s.iteration] = OverlapShare({s.start, s.finish}, busy);
  }
  return out;
}

std::optional<std::vector<Interval>> RecordedActivity(const std::string& folder) {
  std::map<std::string, std::vector<StreamSteps>> runs;  // by run id
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("rank-", 0) != 0 || entry.path().extension() != ".jsonl") continue;
    if (auto s = ReadStreamSteps(entry.path())) runs[s->run_id].push_back(std::move(*s));
  }
  // The folder's run: the one with the most streams, of those the latest to record a step (an
  // earlier run's leftovers are fewer, or older).
  const std::vector<StreamSteps>* run = nullptr;
  TimeNs run_latest = std::numeric_limits<TimeNs>::min();
  for (const auto& [id, streams] : runs) {
    TimeNs latest = std::numeric_limits<TimeNs>::min();
    for (const StreamSteps& s : streams) {
      for (const record::RankSummary& r : s.ranks) latest = std::max(latest, r.start);
    }
    if (run == nullptr || streams.size() > run->size() ||
        (streams.size() == run->size() && latest > run_latest)) {
      run = &streams;
      run_latest = latest;
    }
  }
  if (run == nullptr) return std::nullopt;
  std::vector<record::RankSummary> ranks;
  bool complete = true;
  for (const StreamSteps& s : *run) {
    complete = complete && s.complete;  // a rank without its last iteration is still running
    ranks.insert(ranks.end(), s.ranks.begin(), s.ranks.end());
  }
  std::vector<Interval> steps = IterationIntervals(ranks);
  if (steps.empty()) return std::nullopt;
  if (!complete) steps.emplace_back(steps.back().second, std::numeric_limits<TimeNs>::max());
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
    // A neighbour that sped the job up in the simulation is not scaled into a larger gain.
    per_overlap[i] = std::max(0.0, static_cast<double>(simulated_ns[i]) / simulated_overlap[i]);
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
