// ComputeModel: how long a compute node takes on the emulated GPU (or CPU). Shared by the
// simulator and the real run, so both wait out exactly the same compute time.
//
// Rules (ASTRA-sim's, REFERENCE §2):
//  - roofline explicitly enabled (system.json roofline-enabled: 1): GPU ops take
//    num_ops / min(local_mem_bw * num_ops / tensor_size, peak_perf); tensor_size 0 -> no time;
//    CPU ops replay their duration.
//  - roofline explicitly disabled: replay duration_micros * 1000 ns (1 ns when zero).
//  - not said (genie's default): a node with a duration replays it; a GPU node without one but
//    with num_ops and tensor_size uses the roofline with the documented default peak and
//    memory bandwidth (kDefaultPeakTflops, kDefaultMemBwGBps).
// Pure; any thread.
#pragma once

#include <optional>
#include <string>

#include "genie/common/units.h"
#include "genie/workload/op.h"

namespace genie::compute {

// H100 SXM-class defaults: dense BF16 peak and HBM3 bandwidth.
inline constexpr double kDefaultPeakTflops = 989.0;
inline constexpr double kDefaultMemBwGBps = 3350.0;

struct ComputeParams {
  std::optional<bool> roofline_enabled;  // nullopt = not set in system.json
  double peak_tflops = kDefaultPeakTflops;
  double local_mem_bw_gbps = kDefaultMemBwGBps;
};

class ComputeModel {
 public:
  explicit ComputeModel(const ComputeParams& params) : params_(params) {}
  TimeNs Duration(const Op& op) const;
  // Whether Duration() can use the roofline for some ops (for the start-up banner).
  std::string Describe() const;

 private:
  TimeNs Roofline(const Op& op) const;
  ComputeParams params_;
};

}  // namespace genie::compute
