// The flags that describe a synthetic training step (model preset or file, dimensions, layout,
// GPU), shared by `genie synth` (which writes it as traces) and `genie simulate` (which runs it
// without files). Main thread only.
#pragma once

#include <CLI/CLI.hpp>

#include <limits>
#include <optional>
#include <string>

#include "genie/common/units.h"
#include "genie/synth/job.h"

namespace genie::cli {

struct SynthArgs {
  std::string model = "llama3-8b", model_file, gpu = "h100", order, bucket;
  std::string schedule = "1f1b", sequence_parallel = "auto", grad_sync = "auto";
  std::optional<int64_t> layers, hidden, ffn, heads, kv_heads, vocab, seq, global_batch, experts,
      top_k, shared_experts, expert_ffn, ffn_matrices, dtype_bytes;
  std::optional<double> peak_tflops, mem_bw;
  genie::synth::Layout layout;
  bool list = false;
};

// Adds the model, layout and GPU flags; `model_option` (may be null) gets the --model option,
// so a caller can tell whether one was given.
inline void AddSynthFlags(CLI::App& app, SynthArgs& a, CLI::Option** model_option = nullptr) {
  CLI::Option* m =
      app.add_option("--model,-m", a.model, "Model preset (--list-presets)")->capture_default_str();
  app.add_option("--model-file", a.model_file,
                 "Model description, YAML 'key: value' lines (preset: NAME first to start from "
                 "one); flags below override it");
  app.add_flag("--list-presets", a.list, "List model and GPU presets and exit");
  auto* model = app.add_option_group("model", "Override the preset's dimensions");
  model->add_option("--layers", a.layers);
  model->add_option("--hidden", a.hidden, "d_model");
  model->add_option("--ffn", a.ffn, "MLP width (per expert for MoE)");
  model->add_option("--heads", a.heads);
  model->add_option("--kv-heads", a.kv_heads);
  model->add_option("--vocab", a.vocab);
  model->add_option("--seq", a.seq, "Sequence length");
  model->add_option("--global-batch", a.global_batch, "Sequences per optimizer step");
  model->add_option("--experts", a.experts, "Routed experts (0: dense)");
  model->add_option("--top-k", a.top_k);
  model->add_option("--shared-experts", a.shared_experts);
  model->add_option("--expert-ffn", a.expert_ffn, "Width of one expert's MLP");
  model->add_option("--ffn-matrices", a.ffn_matrices, "2 (GELU MLP) or 3 (SwiGLU)");
  model->add_option("--dtype-bytes", a.dtype_bytes, "Bytes per element (2: bf16)");
  auto* par = app.add_option_group("layout", "Parallel layout");
  par->add_option("--dp", a.layout.dp, "Data parallel degree")->capture_default_str();
  par->add_option("--tp", a.layout.tp, "Tensor parallel degree")->capture_default_str();
  par->add_option("--pp", a.layout.pp, "Pipeline stages")->capture_default_str();
  par->add_option("--sp,--cp", a.layout.sp, "Sequence (context) parallel degree")
      ->capture_default_str();
  par->add_option("--ep", a.layout.ep, "Expert parallel degree")->capture_default_str();
  par->add_option("--zero", a.layout.zero,
                  "0: all-reduce grads; 1/2: reduce-scatter grads + all-gather params; 3: FSDP")
      ->capture_default_str();
  par->add_option("--microbatches", a.layout.microbatches, "Micro-batches per step")
      ->capture_default_str();
  par->add_option("--schedule", a.schedule, "Pipeline schedule: 1f1b | gpipe")
      ->capture_default_str();
  par->add_option("--sequence-parallel", a.sequence_parallel,
                  "Megatron SP for TP (all-gather/reduce-scatter instead of all-reduce): "
                  "auto (on) | on | off")
      ->capture_default_str();
  par->add_option("--grad-sync", a.grad_sync,
                  "auto | microbatch (per layer per micro-batch, STG) | step (buckets, Megatron)")
      ->capture_default_str();
  par->add_option("--bucket", a.bucket, "Gradient bucket size (default 40M elements)");
  par->add_option(
      "--rank-order", a.order,
      "Dimensions fastest-varying first (default tp,sp,ep,dp,pp; stg-*: dp,tp,sp,ep,pp)");
  app.add_option("--gpu", a.gpu, "GPU preset: a100 | h100 | b200")->capture_default_str();
  app.add_option("--peak-tflops", a.peak_tflops, "Override the GPU's peak TFLOP/s");
  app.add_option("--mem-bw", a.mem_bw, "Override the GPU's memory bandwidth in GB/s");
  if (model_option != nullptr) *model_option = m;
}

// The job the flags describe; errors name the flag to change. `model_out` and `gpu_out` get
// the resolved model and GPU (for the summary line).
inline Result<synth::Job> MakeSynthJob(SynthArgs& a, synth::ModelSpec* model_out,
                                       synth::GpuSpec* gpu_out) {
  using namespace genie::synth;
  auto preset = ModelPreset(a.model);
  if (!preset.ok()) return preset.status();
  ModelSpec m = *preset;
  if (!a.model_file.empty()) {
    auto st = LoadModelFile(a.model_file, &m);
    if (!st.ok()) return Status::InvalidArgument(st.message());
  }
  std::string out_of_range;  // a flag's value the field cannot hold (never truncated)
  auto set = [&](const char* flag, const std::optional<int64_t>& v, auto* field) {
    using T = std::remove_pointer_t<decltype(field)>;
    if (!v) return;
    if (*v < std::numeric_limits<T>::min() || *v > std::numeric_limits<T>::max()) {
      if (out_of_range.empty()) {
        out_of_range = std::string(flag) + " " + std::to_string(*v) + " is out of range (at most " +
                       std::to_string(std::numeric_limits<T>::max()) + ")";
      }
      return;
    }
    *field = static_cast<T>(*v);
  };
  set("--layers", a.layers, &m.layers);
  set("--hidden", a.hidden, &m.hidden);
  set("--ffn", a.ffn, &m.ffn);
  set("--heads", a.heads, &m.heads);
  set("--kv-heads", a.kv_heads, &m.kv_heads);
  set("--vocab", a.vocab, &m.vocab);
  set("--seq", a.seq, &m.seq);
  set("--global-batch", a.global_batch, &m.global_batch);
  set("--experts", a.experts, &m.experts);
  set("--top-k", a.top_k, &m.top_k);
  set("--shared-experts", a.shared_experts, &m.shared_experts);
  set("--expert-ffn", a.expert_ffn, &m.expert_ffn);
  set("--ffn-matrices", a.ffn_matrices, &m.ffn_matrices);
  set("--dtype-bytes", a.dtype_bytes, &m.dtype_bytes);
  if (!out_of_range.empty()) return Status::InvalidArgument(out_of_range);
  auto gpu = GpuPreset(a.gpu);
  if (!gpu.ok()) return Status::InvalidArgument(gpu.status().message());
  if (a.peak_tflops) gpu->peak_flops = *a.peak_tflops * 1e12;
  if (a.mem_bw) gpu->mem_bytes_per_s = *a.mem_bw * 1e9;
  Layout& l = a.layout;
  if (a.schedule == "1f1b") {
    l.schedule = PipelineSchedule::k1F1B;
  } else if (a.schedule == "gpipe") {
    l.schedule = PipelineSchedule::kGPipe;
  } else {
    return Status::InvalidArgument("--schedule must be 1f1b or gpipe");
  }
  if (a.sequence_parallel == "auto" || a.sequence_parallel == "on") {
    l.sequence_parallel = 1;
  } else if (a.sequence_parallel == "off") {
    l.sequence_parallel = 0;
  } else {
    return Status::InvalidArgument("--sequence-parallel must be auto, on or off");
  }
  if (a.grad_sync == "auto") {
    l.grad_sync = GradSync::kAuto;
  } else if (a.grad_sync == "microbatch") {
    l.grad_sync = GradSync::kPerMicrobatch;
  } else if (a.grad_sync == "step") {
    l.grad_sync = GradSync::kPerStep;
  } else {
    return Status::InvalidArgument("--grad-sync must be auto, microbatch or step");
  }
  if (!a.bucket.empty()) {
    auto b = genie::ParseBytes(a.bucket);
    if (!b.ok()) return Status::InvalidArgument("--bucket: " + b.status().message());
    l.bucket_bytes = *b;
  }
  if (!a.order.empty()) {
    auto order = ParseOrder(a.order);
    if (!order.ok()) return Status::InvalidArgument(order.status().message());
    l.order = *order;
  }
  *model_out = m;
  *gpu_out = *gpu;
  return Job::Make(m, l, *gpu);
}

}  // namespace genie::cli
