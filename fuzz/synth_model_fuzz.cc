// libFuzzer target for `genie synth --model-file`: the input is a model file (`key: value`
// lines, synth/model.h ApplyModelFile) applied over a preset, validated (Validate: dimensions
// and checked sizes), made into jobs of a few layouts (Job::Make) and, when small enough to be
// quick, emitted for the first and last rank (EmitRank). Every communication size and tensor
// size written must be non-negative and every node must be well formed; any input must give a
// Status, never a crash, hang, overflow (UBSan) or a negative size.
//   build/fuzz/fuzz/synth_model_fuzz -dict=fuzz/dicts/synth_model.dict fuzz/corpus/synth_model_fuzz
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "genie/synth/gpu.h"
#include "genie/synth/job.h"
#include "genie/synth/model.h"
#include "genie/synth/program.h"
#include "genie/synth/step.h"

namespace {

// Checks each node as the writer would write it, keeping none.
class CheckingSink : public genie::synth::NodeSink {
 public:
  genie::Status Write(const ChakraProtoMsg::Node& node) override {
    for (const auto& attr : node.attr()) {
      if ((attr.name() == "comm_size" || attr.name() == "num_ops") && attr.int64_val() < 0) {
        std::fprintf(stderr, "node %s: %s %lld is negative\n", node.name().c_str(),
                     attr.name().c_str(), static_cast<long long>(attr.int64_val()));
        std::abort();
      }
    }
    return genie::Status::Ok();
  }
};

void TryLayout(const genie::synth::ModelSpec& model, genie::synth::Layout layout) {
  auto gpu = genie::synth::GpuPreset("h100");
  if (!gpu.ok()) std::abort();
  auto job = genie::synth::Job::Make(model, layout, *gpu);
  if (!job.ok()) return;
  // Emission is linear in layers and micro-batches: only small jobs, so each input stays quick.
  if (model.layers > 4 || layout.microbatches > 4) return;
  const int world = layout.dp * layout.tp * layout.pp * layout.sp * layout.ep;
  CheckingSink sink;
  (void)genie::synth::EmitRank(*job, 0, &sink);
  if (world > 1) (void)genie::synth::EmitRank(*job, world - 1, &sink);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto base = genie::synth::ModelPreset("stg-gpt");
  if (!base.ok()) std::abort();
  genie::synth::ModelSpec model = *base;
  if (!genie::synth::ApplyModelFile(text, "fuzz.yml", &model).ok()) return 0;
  if (!genie::synth::Validate(model).ok()) return 0;
  genie::synth::Layout one;
  TryLayout(model, one);
  genie::synth::Layout tp;
  tp.tp = 2;
  TryLayout(model, tp);
  genie::synth::Layout mixed;
  mixed.dp = 2;
  mixed.pp = 2;
  mixed.microbatches = 2;
  mixed.ep = model.moe() ? 2 : 1;
  TryLayout(model, mixed);
  return 0;
}
