#include "genie/compute/faulted_compute.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "genie/common/checked_math.h"

namespace genie::compute {

namespace {

// splitmix64's finaliser: every input bit reaches every output bit.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A number in (0, 1) from the draw's key and one of its streams (Box-Muller takes two).
double Unit(uint64_t seed, int rank, NodeId node, int iteration, uint64_t stream) {
  uint64_t h = Mix(seed);
  h = Mix(h ^ static_cast<uint64_t>(static_cast<uint32_t>(rank)));
  h = Mix(h ^ node);
  h = Mix(h ^ static_cast<uint64_t>(static_cast<uint32_t>(iteration)));
  h = Mix(h ^ stream);
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

constexpr double kClip = 3;  // standard scores beyond ±3 are clipped

double RampFactor(const ComputeFault& f, int iteration) {
  const double done = std::min(1.0, static_cast<double>(iteration - f.iteration) / f.over);
  return f.from + (f.to - f.from) * done;
}

bool StallsAt(const ComputeFault& f, int rank, int iteration) {
  if (f.kind != ComputeFaultKind::kStall || !f.Covers(rank, iteration)) return false;
  return f.every == 0 ? iteration == f.iteration : (iteration - f.iteration) % f.every == 0;
}

}  // namespace

nlohmann::json ToJson(const std::vector<ComputeFaultEvent>& events) {
  nlohmann::json out = nlohmann::json::array();
  for (const ComputeFaultEvent& e : events) {
    nlohmann::json j = {{"fault", e.fault},   {"entry", e.entry},         {"rank", e.rank},
                        {"action", e.action}, {"iteration", e.iteration}, {"at_ns", e.at_ns}};
    if (!e.reason.empty()) j["reason"] = e.reason;
    out.push_back(std::move(j));
  }
  return out;
}

double JitterFactor(const ComputeFault& f, int rank, NodeId node, int iteration) {
  const double u1 = Unit(f.seed, rank, node, iteration, 0);
  double x = 1;
  if (f.distribution == JitterDistribution::kUniform) {
    x = 1 + f.sd * std::sqrt(3.0) * (2 * u1 - 1);
  } else {
    const double u2 = Unit(f.seed, rank, node, iteration, 1);
    const double z =
        std::clamp(std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2), -kClip, kClip);
    if (f.distribution == JitterDistribution::kNormal) {
      x = 1 + f.sd * z;
    } else {
      // Mean 1 and standard deviation sd: sigma^2 = ln(1 + sd^2), mu = -sigma^2 / 2.
      const double s2 = std::log1p(f.sd * f.sd);
      x = std::exp(-s2 / 2 + std::sqrt(s2) * z);
    }
  }
  return std::max(0.0, x);
}

FaultedCompute::FaultedCompute(const ComputeFaultSchedule& schedule, int rank) : rank_(rank) {
  for (const ComputeFault& f : schedule.faults) {
    if (f.HasRank(rank)) faults_.push_back(f);
  }
}

double FaultedCompute::Factor(int iteration, NodeId node) const {
  double x = 1;
  for (const ComputeFault& f : faults_) {
    if (!f.Covers(rank_, iteration)) continue;
    switch (f.kind) {
      case ComputeFaultKind::kSlow:
        x *= f.factor;
        break;
      case ComputeFaultKind::kRamp:
        x *= RampFactor(f, iteration);
        break;
      case ComputeFaultKind::kJitter:
        x *= JitterFactor(f, rank_, node, iteration);
        break;
      case ComputeFaultKind::kStall:
        break;
    }
  }
  return x;
}

TimeNs FaultedCompute::Apply(TimeNs duration, int iteration, NodeId node) const {
  const double x = Factor(iteration, node);
  if (x == 1) return duration;
  return SaturatingTimeNs(std::round(static_cast<double>(duration) * x));
}

TimeNs FaultedCompute::Stall(int iteration) const {
  TimeNs stall = 0;
  for (const ComputeFault& f : faults_) {
    if (StallsAt(f, rank_, iteration)) stall = SaturatingAdd(stall, f.stall);
  }
  return stall;
}

ComputeFaultEvent FaultedCompute::Event(const ComputeFault& f, const char* action, int iteration,
                                        TimeNs now) const {
  ComputeFaultEvent e;
  e.entry = f.entry;
  e.fault = f.Describe();
  e.rank = rank_;
  e.action = action;
  e.iteration = iteration;
  e.at_ns = now;
  return e;
}

void FaultedCompute::Starting(int iteration, TimeNs now,
                              std::vector<ComputeFaultEvent>* out) const {
  if (iteration < 1) return;
  for (const ComputeFault& f : faults_) {
    const bool now_on = f.Covers(rank_, iteration);
    const bool was_on = f.Covers(rank_, iteration - 1);
    if (f.kind == ComputeFaultKind::kStall) {
      if (StallsAt(f, rank_, iteration)) out->push_back(Event(f, "stall", iteration, now));
    } else if (now_on && !was_on) {
      out->push_back(Event(f, "apply", iteration, now));
    } else if (was_on && !now_on) {
      out->push_back(Event(f, "undo", iteration, now));
    }
  }
}

void FaultedCompute::Unplayed(int last, TimeNs now, std::vector<ComputeFaultEvent>* out) const {
  for (const ComputeFault& f : faults_) {
    if (f.iteration <= last) continue;
    ComputeFaultEvent e = Event(f, "not applied", 0, now);
    e.reason = last > 0 ? fmt::format(
                              "iteration {} was never reached (the run ended after "
                              "iteration {})",
                              f.iteration, last)
                        : fmt::format(
                              "iteration {} was never reached (no measured iteration "
                              "ran)",
                              f.iteration);
    out->push_back(std::move(e));
  }
}

}  // namespace genie::compute
