// `genie synth`: write the training step of a model on a parallel layout as Chakra traces, one
// file per rank plus the comm-group file (docs/synth.md).
//   genie synth -o W --model llama3-70b --tp 8 --pp 4 --dp 32 --microbatches 16 --gpu h100
//   genie synth -o W --model stg-gpt --dp 2 --tp 2 --pp 2 --microbatches 2
#include <chrono>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include "genie/common/units.h"
#include "genie/synth/writer.h"
#include "tools/genie/command.h"

GENIE_COMMAND(synth, "Write a model's training step on a parallel layout as Chakra traces") {
  struct Args {
    std::string output, model = "llama3-8b", model_file, gpu = "h100", order, bucket;
    std::string schedule = "1f1b", sequence_parallel = "auto", grad_sync = "auto";
    std::optional<int64_t> layers, hidden, ffn, heads, kv_heads, vocab, seq, global_batch, experts,
        top_k, shared_experts, expert_ffn, ffn_matrices, dtype_bytes;
    std::optional<double> peak_tflops, mem_bw;
    genie::synth::Layout layout;
    bool gzip = false, list = false;
    int jobs = 2;
  };
  auto a = std::make_shared<Args>();
  app.add_option("--output,-o", a->output, "Output folder: workload.<rank>.et and workload.json");
  app.add_option("--model,-m", a->model, "Model preset (--list-presets)")->capture_default_str();
  app.add_option("--model-file", a->model_file,
                 "Model description, YAML 'key: value' lines (preset: NAME first to start from "
                 "one); flags below override it");
  app.add_flag("--list-presets", a->list, "List model and GPU presets and exit");
  auto* model = app.add_option_group("model", "Override the preset's dimensions");
  model->add_option("--layers", a->layers);
  model->add_option("--hidden", a->hidden, "d_model");
  model->add_option("--ffn", a->ffn, "MLP width (per expert for MoE)");
  model->add_option("--heads", a->heads);
  model->add_option("--kv-heads", a->kv_heads);
  model->add_option("--vocab", a->vocab);
  model->add_option("--seq", a->seq, "Sequence length");
  model->add_option("--global-batch", a->global_batch, "Sequences per optimizer step");
  model->add_option("--experts", a->experts, "Routed experts (0: dense)");
  model->add_option("--top-k", a->top_k);
  model->add_option("--shared-experts", a->shared_experts);
  model->add_option("--expert-ffn", a->expert_ffn, "Width of one expert's MLP");
  model->add_option("--ffn-matrices", a->ffn_matrices, "2 (GELU MLP) or 3 (SwiGLU)");
  model->add_option("--dtype-bytes", a->dtype_bytes, "Bytes per element (2: bf16)");
  auto* par = app.add_option_group("layout", "Parallel layout");
  par->add_option("--dp", a->layout.dp, "Data parallel degree")->capture_default_str();
  par->add_option("--tp", a->layout.tp, "Tensor parallel degree")->capture_default_str();
  par->add_option("--pp", a->layout.pp, "Pipeline stages")->capture_default_str();
  par->add_option("--sp,--cp", a->layout.sp, "Sequence (context) parallel degree")
      ->capture_default_str();
  par->add_option("--ep", a->layout.ep, "Expert parallel degree")->capture_default_str();
  par->add_option("--zero", a->layout.zero,
                  "0: all-reduce grads; 1/2: reduce-scatter grads + all-gather params; 3: FSDP")
      ->capture_default_str();
  par->add_option("--microbatches", a->layout.microbatches, "Micro-batches per step")
      ->capture_default_str();
  par->add_option("--schedule", a->schedule, "Pipeline schedule: 1f1b | gpipe")
      ->capture_default_str();
  par->add_option("--sequence-parallel", a->sequence_parallel,
                  "Megatron SP for TP (all-gather/reduce-scatter instead of all-reduce): "
                  "auto (on) | on | off")
      ->capture_default_str();
  par->add_option("--grad-sync", a->grad_sync,
                  "auto | microbatch (per layer per micro-batch, STG) | step (buckets, Megatron)")
      ->capture_default_str();
  par->add_option("--bucket", a->bucket, "Gradient bucket size (default 40M elements)");
  par->add_option(
      "--rank-order", a->order,
      "Dimensions fastest-varying first (default tp,sp,ep,dp,pp; stg-*: dp,tp,sp,ep,pp)");
  app.add_option("--gpu", a->gpu, "GPU preset: a100 | h100 | b200")->capture_default_str();
  app.add_option("--peak-tflops", a->peak_tflops, "Override the GPU's peak TFLOP/s");
  app.add_option("--mem-bw", a->mem_bw, "Override the GPU's memory bandwidth in GB/s");
  app.add_flag("--gzip", a->gzip, "gzip-compress each rank's file");
  app.add_option("--jobs,-j", a->jobs, "Writer threads")->capture_default_str();

  return [a]() -> int {
    using namespace genie::synth;
    if (a->list) {
      std::cout << "models:";
      for (const auto& n : ModelPresetNames()) std::cout << " " << n;
      std::cout << "\ngpus:";
      for (const auto& n : GpuPresetNames()) std::cout << " " << n;
      std::cout << "\n";
      return 0;
    }
    auto fail = [](const std::string& m) {
      std::cerr << "genie synth: " << m << "\n";
      return 2;
    };
    if (a->output.empty()) return fail("--output DIR is required");
    auto preset = ModelPreset(a->model);
    if (!preset.ok()) return fail(preset.status().message());
    ModelSpec m = *preset;
    if (!a->model_file.empty()) {
      auto st = LoadModelFile(a->model_file, &m);
      if (!st.ok()) return fail(st.message());
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
    set("--layers", a->layers, &m.layers);
    set("--hidden", a->hidden, &m.hidden);
    set("--ffn", a->ffn, &m.ffn);
    set("--heads", a->heads, &m.heads);
    set("--kv-heads", a->kv_heads, &m.kv_heads);
    set("--vocab", a->vocab, &m.vocab);
    set("--seq", a->seq, &m.seq);
    set("--global-batch", a->global_batch, &m.global_batch);
    set("--experts", a->experts, &m.experts);
    set("--top-k", a->top_k, &m.top_k);
    set("--shared-experts", a->shared_experts, &m.shared_experts);
    set("--expert-ffn", a->expert_ffn, &m.expert_ffn);
    set("--ffn-matrices", a->ffn_matrices, &m.ffn_matrices);
    set("--dtype-bytes", a->dtype_bytes, &m.dtype_bytes);
    if (!out_of_range.empty()) return fail(out_of_range);
    auto gpu = GpuPreset(a->gpu);
    if (!gpu.ok()) return fail(gpu.status().message());
    if (a->peak_tflops) gpu->peak_flops = *a->peak_tflops * 1e12;
    if (a->mem_bw) gpu->mem_bytes_per_s = *a->mem_bw * 1e9;
    Layout& l = a->layout;
    if (a->schedule == "1f1b") {
      l.schedule = PipelineSchedule::k1F1B;
    } else if (a->schedule == "gpipe") {
      l.schedule = PipelineSchedule::kGPipe;
    } else {
      return fail("--schedule must be 1f1b or gpipe");
    }
    if (a->sequence_parallel == "auto" || a->sequence_parallel == "on") {
      l.sequence_parallel = 1;
    } else if (a->sequence_parallel == "off") {
      l.sequence_parallel = 0;
    } else {
      return fail("--sequence-parallel must be auto, on or off");
    }
    if (a->grad_sync == "auto") {
      l.grad_sync = GradSync::kAuto;
    } else if (a->grad_sync == "microbatch") {
      l.grad_sync = GradSync::kPerMicrobatch;
    } else if (a->grad_sync == "step") {
      l.grad_sync = GradSync::kPerStep;
    } else {
      return fail("--grad-sync must be auto, microbatch or step");
    }
    if (!a->bucket.empty()) {
      auto b = genie::ParseBytes(a->bucket);
      if (!b.ok()) return fail("--bucket: " + b.status().message());
      l.bucket_bytes = *b;
    }
    if (!a->order.empty()) {
      auto order = ParseOrder(a->order);
      if (!order.ok()) return fail(order.status().message());
      l.order = *order;
    }
    auto job = Job::Make(m, l, *gpu);
    if (!job.ok()) return fail(job.status().message());
    WriteOptions o;
    o.dir = a->output;
    o.gzip = a->gzip;
    o.jobs = a->jobs;
    auto start = std::chrono::steady_clock::now();
    auto report = WriteWorkload(*job, o);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!report.ok()) {
      std::cerr << "genie synth: " << report.status().message() << "\n";
      return 1;
    }
    std::cout << "synth " << m.name << " (" << ConventionName(m.convention) << " conventions) dp "
              << l.dp << " tp " << l.tp << " pp " << l.pp << " sp " << l.sp << " ep " << l.ep
              << " zero " << l.zero << ", " << l.microbatches << " micro-batch(es) of "
              << job->replica_tokens() << " tokens per replica, " << gpu->name << "\n"
              << "wrote " << report->ranks << " rank(s), " << report->nodes << " nodes, "
              << a->output << "/workload.{0.." << report->ranks - 1 << "}.et"
              << (a->gzip ? " (gzip)" : "") << " and " << report->comm_group_path << " in "
              << seconds << " s\n";
    return 0;
  };
}
