#include "genie/synth/gpu.h"

#include <algorithm>
#include <cctype>

namespace genie::synth {
namespace {

const std::vector<GpuSpec>& GpuPresets() {
  // Dense BF16 tensor-core peaks and HBM bandwidth of the SXM parts.
  static const std::vector<GpuSpec> presets = {
      {"a100", 312e12, 2.039e12},  // A100 80GB SXM
      {"h100", 989e12, 3.35e12},   // H100 SXM5
      {"b200", 2.25e15, 8.0e12},   // B200 (HGX)
  };
  return presets;
}

}  // namespace

double GpuSpec::TimeNs(double flops, double bytes) const {
  double t = std::max(flops / peak_flops, bytes / mem_bytes_per_s) * 1e9;
  return std::max(t, 1.0);
}

Result<GpuSpec> GpuPreset(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& g : GpuPresets()) {
    if (g.name == lower) return g;
  }
  return Status::NotFound("unknown GPU preset '" + std::string(name) +
                          "' (known: a100, h100, b200; or give --peak-tflops and --mem-bw)");
}

const std::vector<std::string>& GpuPresetNames() {
  static const std::vector<std::string> names = {"a100", "h100", "b200"};
  return names;
}

}  // namespace genie::synth
