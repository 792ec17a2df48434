#include "genie/report/completeness.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

namespace genie::report {

using nlohmann::json;

namespace {

// An integer field that fits an int, or nothing; never throws whatever `j` holds.
bool IntField(const json& j, const char* key, int* out) {
  if (!j.is_object()) return false;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return false;
  const int64_t v = it->get<int64_t>();
  if (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{std::numeric_limits<int>::max()}) {
    return false;
  }
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) return false;
  *out = static_cast<int>(v);
  return true;
}

struct Expected {
  int world_size = 0;
  bool world_size_known = false;
  int first = std::numeric_limits<int>::max();
  int last = std::numeric_limits<int>::min();
  bool iterations_known = false;
};

void FromHeader(const json& h, Expected* e) {
  if (!h.is_object()) return;
  int n = 0;
  bool ws = IntField(h, "world_size", &n);
  if (!ws && h.contains("configs") && h["configs"].is_object() &&
      h["configs"].contains("workload")) {
    ws = IntField(h["configs"]["workload"], "ranks", &n);
  }
  if (ws && n > 0) {
    e->world_size = std::max(e->world_size, n);
    e->world_size_known = true;
  }
  int iterations = 0, warmup = 0;
  if (IntField(h, "iterations", &iterations) && iterations >= 0) {
    if (!IntField(h, "warmup", &warmup) || warmup < 0) warmup = 0;
    e->first = std::min(e->first, -warmup);
    e->last = std::max(e->last, iterations - 1);
    e->iterations_known = true;
  }
}

// [lo, hi] minus `have` (sorted), as intervals.
Ranges Complement(int lo, int hi, const std::set<int>& have) {
  Ranges out;
  int64_t next = lo;
  for (int v : have) {
    if (v < lo) continue;
    if (v > hi) break;
    if (v > next) out.emplace_back(static_cast<int>(next), v - 1);
    next = int64_t{v} + 1;
  }
  if (next <= hi) out.emplace_back(static_cast<int>(next), hi);
  return out;
}

}  // namespace

Completeness CheckCompleteness(const json& run_info, const std::vector<record::OpEvent>& ops,
                               const std::vector<record::RankSummary>& ranks, bool truncated) {
  Expected e;
  FromHeader(run_info, &e);
  if (run_info.is_object()) {
    auto h = run_info.find("headers");
    if (h != run_info.end() && h->is_array()) {
      for (const json& one : *h) FromHeader(one, &e);
    }
    auto t = run_info.find("truncated_files");
    if (t != run_info.end() && t->is_array() && !t->empty()) truncated = true;
  }

  std::map<int, std::set<int>> finished;  // rank -> iterations with a rank record
  std::set<int> seen;                     // ranks with any record
  int lo = std::numeric_limits<int>::max(), hi = std::numeric_limits<int>::min();
  for (const auto& s : ranks) {
    finished[s.rank].insert(s.iteration);
    seen.insert(s.rank);
    lo = std::min(lo, s.iteration);
    hi = std::max(hi, s.iteration);
  }
  for (const auto& op : ops) {
    seen.insert(op.rank);
    lo = std::min(lo, op.iteration);
    hi = std::max(hi, op.iteration);
  }

  Completeness c;
  c.truncated = truncated;
  c.world_size_known = e.world_size_known;
  c.world_size = e.world_size_known ? e.world_size : (seen.empty() ? 0 : *seen.rbegin() + 1);
  c.iterations_known = e.iterations_known;
  if (e.iterations_known) {
    c.first_iteration = e.first;
    c.last_iteration = e.last;
  } else if (lo <= hi) {
    c.first_iteration = lo;
    c.last_iteration = hi;
  }
  if (c.world_size > 0) c.missing_ranks = Complement(0, c.world_size - 1, seen);
  for (int rank : seen) {
    Ranges miss = Complement(c.first_iteration, c.last_iteration, finished[rank]);
    if (!miss.empty()) c.unfinished[rank] = std::move(miss);
  }
  return c;
}

std::string FormatRanges(const Ranges& ranges) {
  std::string out;
  for (const auto& [a, b] : ranges) {
    if (!out.empty()) out += ",";
    out += a == b ? std::to_string(a) : fmt::format("{}-{}", a, b);
  }
  return out;
}

std::string DescribeCompleteness(const Completeness& c) {
  if (c.complete()) return "";
  std::string out =
      "# INCOMPLETE: these results cover part of the run only (it was killed or interrupted, "
      "or not every rank's stream was given); the figures below are over what was recorded\n";
  if (!c.missing_ranks.empty()) {
    out += fmt::format("#   ranks with no records: {} (of {}{})\n", FormatRanges(c.missing_ranks),
                       c.world_size, c.world_size_known ? "" : ", as far as the records tell");
  }
  if (!c.unfinished.empty()) {
    // Ranks that miss the same iterations on one line: a killed run reads as a few lines.
    std::map<Ranges, Ranges> by_missing;  // missing iterations -> ranks
    for (const auto& [rank, miss] : c.unfinished) {
      Ranges& r = by_missing[miss];
      if (!r.empty() && r.back().second == rank - 1) {
        r.back().second = rank;
      } else {
        r.emplace_back(rank, rank);
      }
    }
    constexpr size_t kMaxLines = 8;
    size_t shown = 0;
    for (const auto& [miss, who] : by_missing) {
      if (shown++ == kMaxLines) {
        out += fmt::format("#   ... and {} more groups of ranks\n", by_missing.size() - kMaxLines);
        break;
      }
      const bool one = who.size() == 1 && who[0].first == who[0].second;
      out += fmt::format("#   iterations not finished: {} {}: {}\n", one ? "rank" : "ranks",
                         FormatRanges(who), FormatRanges(miss));
    }
    bool warmups = false;
    for (const auto& [rank, miss] : c.unfinished) warmups = warmups || miss.front().first < 0;
    if (warmups) out += "#   (negative iterations are warm-ups)\n";
  }
  if (c.truncated) {
    out +=
        "#   a stream's last record was incomplete (the run stopped while writing it) and "
        "was ignored\n";
  }
  return out;
}

json CompletenessJson(const Completeness& c) {
  auto ranges = [](const Ranges& r) {
    json a = json::array();
    for (const auto& [x, y] : r) a.push_back({x, y});
    return a;
  };
  json unfinished = json::object();
  for (const auto& [rank, miss] : c.unfinished) unfinished[std::to_string(rank)] = ranges(miss);
  json iterations = json::object();
  if (c.last_iteration >= c.first_iteration) {
    iterations = {{"first", c.first_iteration}, {"last", c.last_iteration}};
  }
  return {{"complete", c.complete()},
          {"world_size", c.world_size},
          {"iterations", iterations},
          {"missing_ranks", ranges(c.missing_ranks)},
          {"unfinished_iterations", unfinished},
          {"truncated", c.truncated}};
}

}  // namespace genie::report
