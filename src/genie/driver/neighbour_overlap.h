// Neighbour overlap: the share of a job's iteration during which another job of its jobs file
// was running an iteration of its own, simulated and measured, and the neighbours'
// interference scaled from the one to the other.
//
// Two jobs of one period drift in and out of phase in a real run (each idles between its
// iterations for the harness, a few ms, and its cores wake late by varying amounts), while a
// simulation started at their measured offsets keeps them in one phase throughout. How much a
// neighbour costs an iteration follows how much of it the neighbour's steps covered: two
// interleaved 8-rank 1 MiB all-reduces on star:8 took 16 ms a step alone, 23-25 ms where the
// other's steps covered 60-75 % of it and 31 ms where they covered all of it
// (docs/notes/2026-12-07-llama-interleaved-not-bbr.md). So each measured iteration's
// interference is the simulation's, per unit of simulated overlap, times the measured overlap.
// Pure functions and file reads; any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "genie/common/units.h"
#include "genie/record/rank_summary.h"

namespace genie::driver {

using Interval = std::pair<TimeNs, TimeNs>;  // [start, finish)

// Sorted by start, overlapping or touching intervals joined; empty ones dropped.
std::vector<Interval> MergeIntervals(std::vector<Interval> intervals);
// The share (0-1) of `step` that `busy` (merged) covers; 0 for an empty step.
double OverlapShare(const Interval& step, const std::vector<Interval>& busy);

// Every iteration's [first start, last finish] (warm-ups included) from rank summaries.
std::vector<Interval> IterationIntervals(const std::vector<record::RankSummary>& ranks);
// Per measured iteration of `ranks` (warm-ups left out), the share of it `busy` (merged) covers.
std::map<int, double> IterationOverlaps(const std::vector<record::RankSummary>& ranks,
                                       const std::vector<Interval>& busy);

// A job's iterations as its folder's rank streams (rank-N.jsonl) recorded them so far, each
// moved by its stream's clock offset as results.json's merge moves it; of several runs' streams
// in the folder, the run with the most (then the latest). A job not every rank of which has
// recorded its last iteration (its header's `iterations`) is still running: busy from its last
// recorded finish on. Reads only the header, clock and rank records of each stream. Nullopt
// when the folder has no stream with a rank record.
std::optional<std::vector<Interval>> RecordedActivity(const std::string& folder);

// Below this simulated overlap an iteration's interference says too little of what a full one
// costs (it is mostly the neighbour's absence): the median over the others' stands for it.
inline constexpr double kMinSimulatedOverlap = 0.5;

// Each measured iteration's interference: the simulated interference per unit of simulated
// overlap (`simulated_ns[i]` / `simulated_overlap[i]`, for the simulation's iterations
// with at least kMinSimulatedOverlap; else the median of those) times `measured_overlap` of
// that iteration. Iterations without a measured overlap are left out; empty when no simulated
// iteration has kMinSimulatedOverlap (nothing to scale from).
std::map<int, TimeNs> ScaledInterference(const std::vector<TimeNs>& simulated_ns,
                                         const std::vector<double>& simulated_overlap,
                                         const std::map<int, double>& measured_overlap);

// What a job's neighbours fill of the time its ranks idle alone: its own prediction of the
// iteration (`own_ns`: the measured start skew, late wake-ups, the buckets its idle links
// hold, bbr's probes) beyond the jobs simulation's alone step (`simulated_alone_ns`, none of
// those), less `probe_ns` of probes (jobs launched together opened their connections together
// and probe together, neither filling the other's), times the `share` of the iteration the
// neighbours' steps covered: their bytes cross meanwhile and cost the job that much less
// later. At most `added_ns`, the interference it is taken from; 0 when that is not positive.
TimeNs FilledIdle(TimeNs own_ns, TimeNs probe_ns, TimeNs simulated_alone_ns, double share,
                  TimeNs added_ns);

}  // namespace genie::driver
