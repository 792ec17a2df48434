#include "genie/synth/model.h"

#include "genie/common/checked_math.h"
#include "genie/common/input_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <optional>
#include <map>
#include <stdexcept>

namespace genie::synth {
namespace {

ModelSpec Dense(std::string name, int layers, int64_t hidden, int64_t ffn, int64_t heads,
                int64_t kv_heads, int64_t vocab, int64_t seq, int64_t global_batch, int matrices) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = ffn;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.vocab = vocab;
  m.seq = seq;
  m.global_batch = global_batch;
  m.ffn_matrices = matrices;
  return m;
}

ModelSpec Stg(ModelSpec m) {
  // STG writes comm_size as element counts: one-byte elements reproduce its numbers.
  m.dtype_bytes = 1;
  m.convention = Convention::kStg;
  return m;
}

const std::map<std::string, ModelSpec, std::less<>>& Presets() {
  static const auto* presets = [] {
    auto* p = new std::map<std::string, ModelSpec, std::less<>>;
    auto add = [p](ModelSpec m) { (*p)[m.name] = m; };
    // Published dimensions. GPT-3: Brown et al. 2020, table 2.1 (3.2M-token batches).
    add(Dense("gpt3-175b", 96, 12288, 49152, 96, 96, 50257, 2048, 1536, 2));
    // Llama 3 (Meta, 2024, table 3): GQA with 8 KV heads, SwiGLU, 128K vocabulary; batches of
    // 4M tokens (8B, 70B) and 16M (405B) at 8K context.
    add(Dense("llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192, 512, 3));
    add(Dense("llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192, 512, 3));
    add(Dense("llama3-405b", 126, 16384, 53248, 128, 8, 128256, 8192, 2048, 3));
    // Mixtral 8x7B (Jiang et al. 2024): Mistral-7B widths, 8 experts, top-2 in every layer.
    ModelSpec mixtral = Dense("mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, 4096, 1024, 3);
    mixtral.experts = 8;
    mixtral.top_k = 2;
    add(mixtral);
    // DeepSeekMoE 16B (Dai et al. 2024): fine-grained experts, 64 routed of width 1408, top-6,
    // 2 shared. (Its first layer is dense; here every layer is MoE.)
    ModelSpec ds = Dense("deepseek-moe-16b", 28, 2048, 10944, 16, 16, 102400, 4096, 1024, 3);
    ds.experts = 64;
    ds.top_k = 6;
    ds.shared_experts = 2;
    ds.expert_ffn = 1408;
    add(ds);
    // The small models the shipped STG traces were generated with, inferred from the traces'
    // sizes (docs/synth.md, "The stg presets"): d_model 1024, FFN 4096, vocabulary 32000,
    // 4 layers, 4 sequences of 1024 tokens per step.
    add(Stg(Dense("stg-gpt", 4, 1024, 4096, 32, 32, 32000, 1024, 4, 2)));
    add(Stg(Dense("stg-llama", 4, 1024, 4096, 32, 8, 32000, 1024, 4, 3)));
    ModelSpec moe = Stg(Dense("stg-moe", 4, 1024, 4096, 32, 8, 32000, 1024, 4, 2));
    moe.experts = 8;
    moe.top_k = 2;
    add(moe);
    return p;
  }();
  return *presets;
}

}  // namespace

const char* ConventionName(Convention c) { return c == Convention::kStg ? "stg" : "megatron"; }

Status Validate(const ModelSpec& m) {
  auto bad = [&m](const std::string& what) {
    return Status::InvalidArgument("model '" + m.name + "': " + what);
  };
  if (m.layers < 1) return bad("--layers must be at least 1");
  if (m.hidden < 1 || m.ffn < 1 || m.heads < 1 || m.vocab < 1 || m.seq < 1 || m.global_batch < 1) {
    return bad("--hidden, --ffn, --heads, --vocab, --seq and --global-batch must be positive");
  }
  if (m.hidden % m.heads != 0) return bad("--heads must divide --hidden");
  if (m.kv_heads < 1 || m.heads % m.kv_heads != 0) {
    return bad("--kv-heads must divide --heads (use --kv-heads = --heads without GQA)");
  }
  if (m.ffn_matrices != 2 && m.ffn_matrices != 3) {
    return bad("--ffn-matrices must be 2 (GELU MLP) or 3 (SwiGLU)");
  }
  if (m.experts < 0 || m.top_k < 0 || m.shared_experts < 0) return bad("negative expert counts");
  if (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts)) {
    return bad("--top-k must be between 1 and --experts");
  }
  if (m.dtype_bytes < 1 || m.dtype_bytes > 8) return bad("--dtype-bytes must be 1 to 8");
  return CheckSizes(m, 0);
}

Status CheckSizes(const ModelSpec& m, int64_t tokens) {
  struct Term {
    const char* flag;
    int64_t value;
  };
  // The product of the terms, times the headroom, must fit; else the largest term is the one
  // to reduce.
  const int64_t headroom = int64_t{16} * m.dtype_bytes;
  auto fits = [&](std::initializer_list<Term> terms) -> Status {
    std::optional<int64_t> p = headroom;
    std::string names, values;
    const Term* largest = nullptr;
    for (const Term& t : terms) {
      if (p) p = CheckedMul(*p, std::max<int64_t>(t.value, 1));
      names += std::string(names.empty() ? "" : " x ") + t.flag;
      values += std::string(values.empty() ? "" : " x ") + std::to_string(t.value);
      if (largest == nullptr || t.value > largest->value) largest = &t;
    }
    if (p) return Status::Ok();
    return Status::InvalidArgument(
        "model '" + m.name + "': " + names + " (" + values + ") times " +
        std::to_string(headroom) + " (element size, FLOP and optimizer factors) does not fit in "
        "64 bits: the sizes written would overflow; reduce " + largest->flag);
  };
  const int64_t kv = m.head_dim() * m.kv_heads;
  const int64_t experts = int64_t{m.experts} + m.shared_experts;
  GENIE_RETURN_IF_ERROR(fits({{"--vocab", m.vocab}, {"--hidden", m.hidden}}));
  GENIE_RETURN_IF_ERROR(fits({{"--layers", m.layers}, {"--hidden", m.hidden},
                              {"--hidden (+2 x kv width)", SaturatingAdd(m.hidden, SaturatingMul(int64_t{2}, kv))}, {"2", 2}}));
  GENIE_RETURN_IF_ERROR(fits({{"--layers", m.layers}, {"--ffn-matrices", m.ffn_matrices},
                              {"--hidden", m.hidden}, {"--ffn", m.ffn}}));
  GENIE_RETURN_IF_ERROR(fits({{"--layers", m.layers}, {"--experts (+shared)", experts},
                              {"--ffn-matrices", m.ffn_matrices}, {"--hidden", m.hidden},
                              {"--expert-ffn", m.expert_width()}}));
  GENIE_RETURN_IF_ERROR(fits({{"--global-batch", m.global_batch}, {"--seq", m.seq}}));
  if (tokens <= 0) return Status::Ok();
  const Term t{"tokens per micro-batch (--global-batch x --seq / (--dp x --microbatches))",
               tokens};
  GENIE_RETURN_IF_ERROR(fits({t, {"--vocab", m.vocab}}));
  GENIE_RETURN_IF_ERROR(fits({t, {"--seq", m.seq}, {"--hidden", m.hidden}}));
  GENIE_RETURN_IF_ERROR(fits({t, {"--hidden", m.hidden}, {"--hidden (+2 x kv width)", SaturatingAdd(m.hidden, SaturatingMul(int64_t{2}, kv))}}));
  GENIE_RETURN_IF_ERROR(fits({t, {"--ffn-matrices", m.ffn_matrices}, {"--hidden", m.hidden},
                              {"--ffn", m.ffn}}));
  GENIE_RETURN_IF_ERROR(fits({t, {"--top-k (+shared)", int64_t{m.top_k} + m.shared_experts},
                              {"--ffn-matrices", m.ffn_matrices}, {"--hidden", m.hidden},
                              {"--expert-ffn", m.expert_width()}}));
  GENIE_RETURN_IF_ERROR(fits({t, {"--hidden", m.hidden}, {"--experts", m.experts}}));
  return Status::Ok();
}

Result<ModelSpec> ModelPreset(std::string_view name) {
  auto it = Presets().find(name);
  if (it == Presets().end()) {
    std::string known;
    for (const auto& n : ModelPresetNames()) known += (known.empty() ? "" : ", ") + n;
    return Status::NotFound("unknown model preset '" + std::string(name) + "' (known: " + known +
                            ")");
  }
  return it->second;
}

const std::vector<std::string>& ModelPresetNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const auto& [n, m] : Presets()) v->push_back(n);
    return v;
  }();
  return *names;
}

}  // namespace genie::synth

namespace genie::synth {

Status ApplyModelFile(std::string_view text, const std::string& source, ModelSpec* model) {
  struct Entry {
    int line_no;
    std::string key, value;
  };
  std::vector<Entry> entries;
  const Entry* preset = nullptr;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    std::string line(
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
    pos = end == std::string_view::npos ? text.size() + 1 : end + 1;
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    auto trim = [](std::string s) {
      size_t a = s.find_first_not_of(" \t\r\"'");
      size_t b = s.find_last_not_of(" \t\r\"'");
      return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
    };
    line = trim(line);
    if (line.empty() || line == "---") continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      return Status::InvalidArgument(source + ":" + std::to_string(line_no) +
                                     ": expected 'key: value', got '" + line + "'");
    }
    std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    for (char& c : key) c = c == '-' ? '_' : c;
    entries.push_back({line_no, key, value});
  }
  // The preset is the base the other keys change, wherever it stands in the file (a key above
  // it would otherwise be replaced by the preset's value without a word); one preset only.
  for (const Entry& e : entries) {
    if (e.key != "preset") continue;
    if (preset != nullptr) {
      return Status::InvalidArgument(source + ":" + std::to_string(e.line_no) +
                                     ": a second preset (the first is on line " +
                                     std::to_string(preset->line_no) + "); keep one");
    }
    preset = &e;
  }
  if (preset != nullptr) {
    auto base = ModelPreset(preset->value);
    if (!base.ok()) {
      return Status::InvalidArgument(source + ":" + std::to_string(preset->line_no) + ": " +
                                     base.status().message());
    }
    *model = std::move(*base);
  }
  for (const Entry& e : entries) {
    const std::string& key = e.key;
    const std::string& value = e.value;
    auto where = [&] { return source + ":" + std::to_string(e.line_no) + ": "; };
    if (key == "preset") continue;
    if (key == "name") {
      model->name = value;
      continue;
    }
    if (key == "convention") {
      if (value != "megatron" && value != "stg") {
        return Status::InvalidArgument(where() + "convention must be megatron or stg");
      }
      model->convention = value == "stg" ? Convention::kStg : Convention::kMegatron;
      continue;
    }
    int64_t v = 0;
    try {
      size_t used = 0;
      v = std::stoll(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      return Status::InvalidArgument(where() + key + ": '" + value + "' is not an integer");
    }
    const std::map<std::string, int64_t*> wide = {{"hidden", &model->hidden},
                                                  {"ffn", &model->ffn},
                                                  {"heads", &model->heads},
                                                  {"kv_heads", &model->kv_heads},
                                                  {"vocab", &model->vocab},
                                                  {"seq", &model->seq},
                                                  {"global_batch", &model->global_batch},
                                                  {"expert_ffn", &model->expert_ffn}};
    const std::map<std::string, int*> narrow = {{"layers", &model->layers},
                                                {"ffn_matrices", &model->ffn_matrices},
                                                {"experts", &model->experts},
                                                {"top_k", &model->top_k},
                                                {"shared_experts", &model->shared_experts},
                                                {"dtype_bytes", &model->dtype_bytes}};
    if (auto it = wide.find(key); it != wide.end()) {
      *it->second = v;
    } else if (auto it2 = narrow.find(key); it2 != narrow.end()) {
      if (v < INT32_MIN || v > INT32_MAX)
        return Status::InvalidArgument(where() + key + " is out of range");
      *it2->second = static_cast<int>(v);
    } else {
      return Status::InvalidArgument(where() + "unknown key '" + key + "'");
    }
  }
  return Status::Ok();
}

Status LoadModelFile(const std::string& path, ModelSpec* model) {
  GENIE_RETURN_IF_ERROR(CheckInputFile(path, "model file"));
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return Status::IoError(path + ": reading the model file failed: " + std::strerror(errno));
  }
  return ApplyModelFile(text.str(), path, model);
}

}  // namespace genie::synth
