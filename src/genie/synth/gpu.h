// GpuSpec: what a compute node's duration is derived from — peak dense FLOP/s at the training
// dtype and memory bandwidth (roofline: time = max(flops / peak, bytes / bandwidth)) — with
// presets for A100, H100 and B200 (NVIDIA's published SXM figures, dense BF16). Plain values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "genie/common/status.h"

namespace genie::synth {

struct GpuSpec {
  std::string name;
  double peak_flops = 0;       // FLOP/s
  double mem_bytes_per_s = 0;  // HBM bandwidth, bytes/s

  // Roofline time of `flops` on `bytes` of memory traffic, in nanoseconds (at least 1).
  double TimeNs(double flops, double bytes) const;
};

Result<GpuSpec> GpuPreset(std::string_view name);  // "a100", "h100", "b200" (any case)
const std::vector<std::string>& GpuPresetNames();

}  // namespace genie::synth
