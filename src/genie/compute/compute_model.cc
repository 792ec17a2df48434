#include "genie/compute/compute_model.h"

#include <algorithm>
#include <cstdio>

#include "genie/common/checked_math.h"

namespace genie::compute {

TimeNs ComputeModel::Roofline(const Op& op) const {
  if (op.tensor_size == 0) return 0;  // ASTRA-sim treats it as an invalid node: no time
  const double num_ops = static_cast<double>(op.num_ops);
  const double intensity = num_ops / static_cast<double>(op.tensor_size);
  const double perf = std::min(params_.local_mem_bw_gbps * 1e9 * intensity,
                               params_.peak_tflops * 1e12);
  if (perf <= 0) return 0;
  return SaturatingTimeNs(num_ops / perf * 1e9);  // the simulator refuses kMaxTimeNs
}

TimeNs ComputeModel::Duration(const Op& op) const {
  const bool has_duration = op.duration_ns > 0;
  if (params_.roofline_enabled.has_value()) {
    if (*params_.roofline_enabled && !op.is_cpu_op) return Roofline(op);
    return has_duration ? op.duration_ns : 1;
  }
  if (has_duration) return op.duration_ns;
  if (!op.is_cpu_op && op.num_ops > 0 && op.tensor_size > 0) return Roofline(op);
  return 1;
}

std::string ComputeModel::Describe() const {
  char buf[256];
  const char* mode = !params_.roofline_enabled.has_value()
                         ? "trace durations; roofline for nodes without one"
                         : (*params_.roofline_enabled ? "roofline for GPU ops (roofline-enabled)"
                                                      : "trace durations (roofline disabled)");
  std::snprintf(buf, sizeof buf, "compute: %s; peak %.0f TFLOPS, memory %.0f GB/s", mode,
                params_.peak_tflops, params_.local_mem_bw_gbps);
  return buf;
}

}  // namespace genie::compute
