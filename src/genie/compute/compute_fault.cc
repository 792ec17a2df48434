#include "genie/compute/compute_fault.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "genie/common/input_file.h"

namespace genie::compute {

namespace {

constexpr const char* kKeys =
    "rank, iteration, iterations, and one of compute, stall [every], jitter, ramp";
constexpr double kMaxFactor = 1000;
constexpr TimeNs kMaxStall = 600 * kNsPerSec;

// The keys only a network fault takes (testbed/fault.h), named as such when a compute fault
// has one.
const std::set<std::string> kNetworkKeys = {"link",   "direction", "at",    "for",
                                            "period", "rate",      "queue", "loss",
                                            "delay",  "down",      "up",    "flap"};

// "1.5x", "1.5" -> 1.5.
Result<double> ParseFactor(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == ' ' || t.back() == 'x' || t.back() == 'X')) t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size()) {
    return Status::InvalidArgument("'" + text +
                                   "' is not a factor; write e.g. 1.5x (the compute takes 1.5 "
                                   "times as long as the trace says)");
  }
  return v;
}

Result<JitterDistribution> ParseDistribution(const std::string& text) {
  if (text == "normal") return JitterDistribution::kNormal;
  if (text == "uniform") return JitterDistribution::kUniform;
  if (text == "lognormal") return JitterDistribution::kLognormal;
  return Status::InvalidArgument("distribution '" + text +
                                 "' is not one genie draws from; use normal, uniform or "
                                 "lognormal");
}

// A whole number >= `min` from a scalar node.
Result<int64_t> WholeNumber(const YAML::Node& node, const std::string& key, int64_t min) {
  const std::string text = node.IsScalar() ? node.as<std::string>() : "";
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size()) {
    return Status::InvalidArgument(key + ": '" + text + "' is not a whole number");
  }
  if (v < min) return Status::InvalidArgument(fmt::format("{}: {} is below {}", key, v, min));
  return static_cast<int64_t>(v);
}

std::string Percent(double fraction) { return fmt::format("{:g}%", fraction * 100); }

Result<std::vector<int>> ParseRanks(const YAML::Node& node) {
  std::vector<int> ranks;
  if (node.IsScalar() && node.as<std::string>() == "all") return ranks;
  auto one = [&](const YAML::Node& n) -> Status {
    GENIE_ASSIGN_OR_RETURN(int64_t r, WholeNumber(n, "rank", 0));
    if (r > 1'000'000) return Status::InvalidArgument(fmt::format("rank: {} is too large", r));
    ranks.push_back(static_cast<int>(r));
    return Status::Ok();
  };
  if (node.IsSequence()) {
    for (const auto& n : node) GENIE_RETURN_IF_ERROR(one(n));
    if (ranks.empty())
      return Status::InvalidArgument("rank: an empty list; name at least one rank");
  } else {
    GENIE_RETURN_IF_ERROR(one(node));
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

Status ParseJitter(const YAML::Node& node, ComputeFault* f) {
  f->kind = ComputeFaultKind::kJitter;
  if (node.IsScalar()) {
    GENIE_ASSIGN_OR_RETURN(f->sd, ParseFraction(node.as<std::string>()));
    return Status::Ok();
  }
  if (!node.IsMap()) {
    return Status::InvalidArgument(
        "jitter: write 10% or {sd: 10%, distribution: normal|uniform|lognormal, seed: 7}");
  }
  bool sd = false;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (key == "sd") {
      GENIE_ASSIGN_OR_RETURN(f->sd, ParseFraction(kv.second.as<std::string>()));
      sd = true;
    } else if (key == "distribution") {
      GENIE_ASSIGN_OR_RETURN(f->distribution, ParseDistribution(kv.second.as<std::string>()));
    } else if (key == "seed") {
      GENIE_ASSIGN_OR_RETURN(int64_t seed, WholeNumber(kv.second, "jitter: seed", 0));
      f->seed = static_cast<uint64_t>(seed);
    } else {
      return Status::InvalidArgument("jitter: unknown key '" + key + "' (sd, distribution, seed)");
    }
  }
  if (!sd) return Status::InvalidArgument("jitter: say its sd (e.g. sd: 10%)");
  return Status::Ok();
}

Status ParseRamp(const YAML::Node& node, ComputeFault* f) {
  f->kind = ComputeFaultKind::kRamp;
  if (!node.IsMap()) {
    return Status::InvalidArgument("ramp: write {from: 1.0x, to: 2.0x, over: 5} (iterations)");
  }
  bool to = false, over = false;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (key == "from" || key == "to") {
      auto v = ParseFactor(kv.second.as<std::string>());
      if (!v.ok()) return Status::InvalidArgument("ramp: " + key + ": " + v.status().message());
      (key == "from" ? f->from : f->to) = *v;
      to = to || key == "to";
    } else if (key == "over") {
      GENIE_ASSIGN_OR_RETURN(int64_t n, WholeNumber(kv.second, "ramp: over", 1));
      f->over = static_cast<int>(std::min<int64_t>(n, 1'000'000));
      over = true;
    } else {
      return Status::InvalidArgument("ramp: unknown key '" + key + "' (from, to, over)");
    }
  }
  if (!to || !over) {
    return Status::InvalidArgument(
        "ramp: say where it ends and how fast: {from: 1.0x, to: 2.0x, "
        "over: 5} (over: iterations)");
  }
  return Status::Ok();
}

Status Validate(const ComputeFault& f, bool every_given) {
  auto factor = [](const char* what, double v) -> Status {
    if (!(v > 0)) {
      return Status::InvalidArgument(fmt::format(
          "{}: {:g}x: a factor must be above 0 (1.5x: 50 % slower, 0.5x: twice as fast)", what, v));
    }
    if (v > kMaxFactor) {
      return Status::InvalidArgument(fmt::format(
          "{}: {:g}x is beyond {:g}x; use a stall to stop a rank", what, v, kMaxFactor));
    }
    return Status::Ok();
  };
  switch (f.kind) {
    case ComputeFaultKind::kSlow:
      GENIE_RETURN_IF_ERROR(factor("compute", f.factor));
      break;
    case ComputeFaultKind::kRamp:
      GENIE_RETURN_IF_ERROR(factor("ramp: from", f.from));
      GENIE_RETURN_IF_ERROR(factor("ramp: to", f.to));
      break;
    case ComputeFaultKind::kStall:
      if (f.stall <= 0 || f.stall > kMaxStall) {
        return Status::InvalidArgument("stall: must be in (0, 10 min]");
      }
      break;
    case ComputeFaultKind::kJitter:
      if (!(f.sd > 0 && f.sd < 1)) {
        return Status::InvalidArgument(
            "jitter: sd " + Percent(f.sd) +
            ": must be above 0 and under 100 % (the factor's mean is 1: at 100 % a draw would "
            "often take no time at all)");
      }
      break;
  }
  if (every_given && f.kind != ComputeFaultKind::kStall) {
    return Status::InvalidArgument("every: only a stall repeats (stall: 2s, every: 3)");
  }
  return Status::Ok();
}

}  // namespace

const char* KindName(ComputeFaultKind k) {
  switch (k) {
    case ComputeFaultKind::kSlow:
      return "compute";
    case ComputeFaultKind::kStall:
      return "stall";
    case ComputeFaultKind::kJitter:
      return "jitter";
    case ComputeFaultKind::kRamp:
      return "ramp";
  }
  return "?";
}

const char* DistributionName(JitterDistribution d) {
  switch (d) {
    case JitterDistribution::kNormal:
      return "normal";
    case JitterDistribution::kUniform:
      return "uniform";
    case JitterDistribution::kLognormal:
      return "lognormal";
  }
  return "?";
}

bool ComputeFault::HasRank(int rank) const {
  return ranks.empty() || std::binary_search(ranks.begin(), ranks.end(), rank);
}

bool ComputeFault::Covers(int rank, int k) const {
  if (k < iteration || (iterations > 0 && k >= iteration + iterations)) return false;
  return HasRank(rank);
}

std::string ComputeFault::Describe() const {
  std::string who;
  if (ranks.empty()) {
    who = "every rank";
  } else {
    who = fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(ranks, ","));
  }
  std::string what;
  switch (kind) {
    case ComputeFaultKind::kSlow:
      what = fmt::format("compute {:g}x", factor);
      break;
    case ComputeFaultKind::kRamp:
      what = fmt::format("ramp {:g}x to {:g}x over {} iterations", from, to, over);
      break;
    case ComputeFaultKind::kStall:
      what = "stall " + FormatDuration(stall);
      if (every > 0) what += fmt::format(" every {} iterations", every);
      break;
    case ComputeFaultKind::kJitter:
      what =
          fmt::format("jitter sd {} {} seed {}", Percent(sd), DistributionName(distribution), seed);
      break;
  }
  std::string when = fmt::format(" from iteration {}", iteration);
  if (kind == ComputeFaultKind::kStall && every == 0)
    when = fmt::format(" at iteration {}", iteration);
  if (iterations > 0) when += fmt::format(" for {} iterations", iterations);
  return who + ": " + what + when;
}

Result<ComputeFaultSchedule> ParseComputeFaults(const std::string& text,
                                                const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(origin + ": not YAML: " + e.what());
  }
  if (!root.IsMap() || !root["faults"] || !root["faults"].IsSequence()) {
    return Status::InvalidArgument(origin +
                                   ": expected `faults:` with a list of faults "
                                   "(docs/testbed.md)");
  }
  ComputeFaultSchedule out;
  out.origin = origin;
  int index = 0;
  for (const auto& n : root["faults"]) {
    ++index;
    const std::string where = fmt::format("{}: fault {}", origin, index);
    if (!n.IsMap()) {
      return Status::InvalidArgument(where +
                                     ": expected a mapping (link: h3, rate: 100mbit for a "
                                     "link; rank: 3, compute: 1.5x for a rank)");
    }
    bool has_link = false, has_rank = false;
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      has_link = has_link || key == "link";
      has_rank = has_rank || key == "rank";
    }
    if (has_link && has_rank) {
      return Status::InvalidArgument(where +
                                     ": both link and rank: a fault changes a link (a "
                                     "network fault) or a rank's compute, not both; "
                                     "write two entries");
    }
    if (has_link) {
      ++out.network_faults;
      continue;
    }
    if (!has_rank) {
      return Status::InvalidArgument(where +
                                     ": say which link (a network fault: link: h3) or "
                                     "which rank (a compute fault: rank: 3, [1, 2] or "
                                     "all) it changes");
    }
    ComputeFault f;
    f.entry = index;
    int kinds = 0;
    bool every_given = false;
    auto fail = [&](const Status& st) {
      return Status::InvalidArgument(where + ": " + st.message());
    };
    try {
      for (const auto& kv : n) {
        const std::string key = kv.first.as<std::string>();
        const YAML::Node& v = kv.second;
        const std::string value = v.IsScalar() ? v.as<std::string>() : "";
        Status st;
        if (key == "rank") {
          auto r = ParseRanks(v);
          if (r.ok()) f.ranks = std::move(*r);
          st = r.status();
        } else if (key == "iteration") {
          auto k = WholeNumber(v, "iteration (measured iterations count from 1)", 1);
          if (k.ok()) f.iteration = static_cast<int>(std::min<int64_t>(*k, 1'000'000'000));
          st = k.status();
        } else if (key == "iterations") {
          auto k = WholeNumber(v, "iterations (how many it lasts)", 1);
          if (k.ok()) f.iterations = static_cast<int>(std::min<int64_t>(*k, 1'000'000'000));
          st = k.status();
        } else if (key == "compute") {
          auto x = ParseFactor(value);
          if (x.ok()) f.factor = *x;
          st = x.ok() ? Status::Ok() : Status::InvalidArgument("compute: " + x.status().message());
          f.kind = ComputeFaultKind::kSlow, ++kinds;
        } else if (key == "stall") {
          auto d = ParseDuration(value);
          if (d.ok()) f.stall = *d;
          st = d.ok() ? Status::Ok() : Status::InvalidArgument("stall: " + d.status().message());
          f.kind = ComputeFaultKind::kStall, ++kinds;
        } else if (key == "every") {
          auto k = WholeNumber(v, "every (iterations between stalls)", 1);
          if (k.ok()) f.every = static_cast<int>(std::min<int64_t>(*k, 1'000'000'000));
          st = k.status();
          every_given = true;
        } else if (key == "jitter") {
          st = ParseJitter(v, &f);
          ++kinds;
        } else if (key == "ramp") {
          st = ParseRamp(v, &f);
          ++kinds;
        } else if (key == "at" || key == "for") {
          st = Status::InvalidArgument(
              key +
              ": a compute fault is timed in iterations (iteration: 5, iterations: 3), not "
              "seconds, so that a run and its prediction slow the same ops");
        } else if (kNetworkKeys.count(key)) {
          st = Status::InvalidArgument("'" + key +
                                       "' is a network fault's key (with link:); a "
                                       "compute fault takes " +
                                       kKeys);
        } else {
          st = Status::InvalidArgument("unknown key '" + key + "' (a compute fault takes " + kKeys +
                                       "; docs/testbed.md)");
        }
        if (!st.ok()) return fail(st);
      }
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument(where + ": a value has the wrong type: " + e.what());
    }
    if (kinds != 1) {
      return Status::InvalidArgument(where +
                                     ": say exactly one of compute (1.5x), stall (2s), "
                                     "jitter (10%), ramp ({from: 1x, to: 2x, over: 5})");
    }
    if (Status st = Validate(f, every_given); !st.ok()) return fail(st);
    out.faults.push_back(std::move(f));
  }
  return out;
}

Result<ComputeFaultSchedule> LoadComputeFaults(const std::string& path) {
  GENIE_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path, "fault schedule"));
  return ParseComputeFaults(text, path);
}

Status CheckRanks(const ComputeFaultSchedule& schedule, int world_size) {
  for (const ComputeFault& f : schedule.faults) {
    for (int r : f.ranks) {
      if (r >= world_size) {
        return Status::InvalidArgument(fmt::format(
            "{}: fault {} ({}): the job has no rank {} (its ranks are 0..{}); name one of them, "
            "or `rank: all`",
            schedule.origin, f.entry, f.Describe(), r, world_size - 1));
      }
    }
  }
  return Status::Ok();
}

}  // namespace genie::compute
