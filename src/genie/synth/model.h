// ModelSpec: the transformer `genie synth` writes a training step of — layers, widths, heads,
// vocabulary, sequence and batch, experts — and the published presets (GPT-3 175B, Llama-3,
// Mixtral, a DeepSeek-style fine-grained MoE) plus the stg-* presets that reproduce the shipped
// ASTRA-sim STG traces (tests/data/traces/generated/stg). Also the Convention a preset implies:
// which framework's communication habits the emitters follow (docs/synth.md, "Conventions").
// Plain values; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "genie/common/status.h"

namespace genie::synth {

// Megatron-LM/FSDP habits, or the STG generator's (per micro-batch gradient all-reduce, unsharded
// embedding all-reduced over every token-sharding dimension, element counts as sizes, ...).
enum class Convention { kMegatron, kStg };
const char* ConventionName(Convention c);

struct ModelSpec {
  std::string name;
  int layers = 0;
  int64_t hidden = 0;    // d_model
  int64_t ffn = 0;       // MLP hidden width (per expert for MoE unless expert_ffn is set)
  int64_t heads = 0;     // query heads
  int64_t kv_heads = 0;  // key/value heads (= heads without GQA)
  int64_t vocab = 0;
  int64_t seq = 0;           // tokens per sequence
  int64_t global_batch = 0;  // sequences per optimizer step
  int ffn_matrices = 3;      // 2: GELU MLP (up, down); 3: SwiGLU (gate, up, down)
  int experts = 0;           // routed experts per MoE layer; 0 = dense model
  int top_k = 0;             // experts each token goes to
  int shared_experts = 0;    // always-on experts (DeepSeek-MoE), computed beside the routed ones
  int64_t expert_ffn = 0;    // width of one expert's MLP; 0 = ffn
  int dtype_bytes = 2;       // bytes per element of weights, activations and gradients
  Convention convention = Convention::kMegatron;

  bool moe() const { return experts > 0; }
  int64_t head_dim() const { return hidden / heads; }
  int64_t kv_dim() const { return head_dim() * kv_heads; }
  int64_t expert_width() const { return expert_ffn > 0 ? expert_ffn : ffn; }
  // Parameters (elements) of one layer's pieces, unsharded.
  int64_t QkvParams() const { return hidden * (hidden + 2 * kv_dim()); }
  int64_t OutProjParams() const { return hidden * hidden; }
  int64_t AttentionParams() const { return QkvParams() + OutProjParams(); }
  int64_t MlpParams() const { return ffn_matrices * hidden * ffn; }
  int64_t ExpertParams() const { return ffn_matrices * hidden * expert_width(); }
  // STG's router weight is hidden x top_k; a real router is hidden x experts.
  int64_t RouterParams() const {
    return hidden * (convention == Convention::kStg ? top_k : experts);
  }
  int64_t EmbeddingParams() const { return vocab * hidden; }
};

// Checks the dimensions agree (heads divide hidden, kv_heads divide heads, top_k <= experts,...).
// The message names the field and what to change.
Status Validate(const ModelSpec& model);

// Checks that every size and count the emitters form from these dimensions fits in 64 bits
// with room for their constant factors (FLOPs x4, optimizer bytes x16) and the element size:
// parameters (per layer and all layers), and `tokens` (tokens of a micro-batch; 0 = the
// whole step) times the widths they meet. The message names the fields and which to reduce.
// Validate() calls it with tokens = 0 after the dimension checks.
Status CheckSizes(const ModelSpec& model, int64_t tokens);

// A preset by name ("llama3-70b", "stg-gpt", ...); the error lists the known names.
Result<ModelSpec> ModelPreset(std::string_view name);
const std::vector<std::string>& ModelPresetNames();

}  // namespace genie::synth

namespace genie::synth {

// Applies a model file to `model`: YAML-style `key: value` lines (a subset: no nesting; `#`
// starts a comment). Keys: preset (applied first), name, layers, hidden, ffn, heads, kv_heads,
// vocab, seq, global_batch, ffn_matrices, experts, top_k, shared_experts, expert_ffn,
// dtype_bytes, convention (megatron | stg). Errors name `source` and the line.
// `preset:` is applied first wherever it stands (keys above it are not lost); a second preset
// is an error.
Status ApplyModelFile(std::string_view text, const std::string& source, ModelSpec* model);
// ApplyModelFile on the file at `path`, which must be a readable regular file (a folder, FIFO
// or missing file is refused naming it).
Status LoadModelFile(const std::string& path, ModelSpec* model);

}  // namespace genie::synth
