// FaultedCompute: what a compute-fault schedule (compute_fault.h) does to one rank — how long
// each GPU compute op takes and how long the rank stalls at an iteration's start — and the
// events that say when each fault took effect.
//
// Every figure is a pure function of (schedule, rank, measured iteration, node id): a jitter
// draw comes from a hash of (seed, rank, node id, iteration), never from a generator whose state
// depends on the order ops are issued in. So a real run and its prediction (or two simulations)
// draw exactly the same factors whatever their timing. Faults combine: factors multiply (slow x
// ramp x jitter), stalls add.
//
// Owned by one rank's Executor; read-only after construction, so any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/compute/compute_fault.h"
#include "genie/workload/op.h"

namespace genie::compute {

// A fault of a schedule taking effect on a rank (or never doing so), for the results.
struct ComputeFaultEvent {
  int entry = 0;      // ComputeFault::entry
  std::string fault;  // ComputeFault::Describe()
  int rank = 0;
  // "apply" (from this iteration), "undo" (its iterations are over), "stall" (this iteration's
  // start), "not applied" (`reason` says why).
  std::string action;
  int iteration = 0;  // measured, from 1
  TimeNs at_ns = 0;   // on the rank's clock: the iteration's start (or the run's end)
  std::string reason;
};

// As results.json lists them (provenance.compute_faults): fault, entry, rank, action,
// iteration, at_ns and, for "not applied", reason.
nlohmann::json ToJson(const std::vector<ComputeFaultEvent>& events);

// The factor a jitter fault gives compute op `node` of `rank` in measured iteration `iteration`:
// mean 1, standard deviation f.sd, from f.distribution (normal, or uniform 1 ± sd·√3, or
// lognormal), its standard score clipped to ±3 and the factor to at least 0. Pure.
double JitterFactor(const ComputeFault& f, int rank, NodeId node, int iteration);

class FaultedCompute {
 public:
  // Keeps the faults of `schedule` that name `rank`.
  FaultedCompute(const ComputeFaultSchedule& schedule, int rank);

  bool empty() const { return faults_.empty(); }
  // The product of the factors holding on GPU compute op `node` in `iteration` (1 if none).
  double Factor(int iteration, NodeId node) const;
  // `duration` (the trace's or the roofline's) under the faults: rounded, at least 0.
  TimeNs Apply(TimeNs duration, int iteration, NodeId node) const;
  // How long the rank stalls at the start of `iteration` (0 if no stall then).
  TimeNs Stall(int iteration) const;
  // What changes as `iteration` starts at `now`: the faults that begin (apply) or end (undo)
  // then and the stalls due then, appended to `out`.
  void Starting(int iteration, TimeNs now, std::vector<ComputeFaultEvent>* out) const;
  // At the run's end (`now`, the last measured iteration `last`): every fault of this rank that
  // never took effect, appended to `out` as "not applied" with why.
  void Unplayed(int last, TimeNs now, std::vector<ComputeFaultEvent>* out) const;

 private:
  ComputeFaultEvent Event(const ComputeFault& f, const char* action, int iteration,
                          TimeNs now) const;
  std::vector<ComputeFault> faults_;
  int rank_;
};

}  // namespace genie::compute
