#include "genie/workload/rank_graph.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "genie/trace/node_header.h"
#include "genie/workload/op_decoder.h"

namespace genie::workload {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

std::string WithName(const char* name, const std::string& text) {
  return "[" + std::string(name) + "] " + text;
}

std::string ListIds(const std::vector<NodeId>& ids, size_t limit = 20) {
  std::string s;
  for (size_t i = 0; i < ids.size() && i < limit; ++i) {
    if (i > 0) s += " -> ";
    s += std::to_string(ids[i]);
  }
  if (ids.size() > limit) s += " -> ... (" + std::to_string(ids.size()) + " nodes)";
  return s;
}

// Builds CSR dependents lists from (dependency index, dependent index) pairs.
void BuildCsr(size_t n, std::vector<std::pair<uint32_t, uint32_t>>* edges,
              std::vector<uint32_t>* begin, std::vector<uint32_t>* out) {
  begin->assign(n + 1, 0);
  for (const auto& [dep, node] : *edges) ++(*begin)[dep + 1];
  for (size_t i = 0; i < n; ++i) (*begin)[i + 1] += (*begin)[i];
  out->resize(edges->size());
  std::vector<uint32_t> fill(begin->begin(), begin->end() - 1);
  for (const auto& [dep, node] : *edges) (*out)[fill[dep]++] = node;
  edges->clear();
  edges->shrink_to_fit();
}

}  // namespace

Result<std::unique_ptr<RankGraph>> RankGraph::Open(const std::string& path, int rank,
                                                   const ReadOptions& options) {
  GENIE_ASSIGN_OR_RETURN(auto reader, trace::EtReader::Open(path));
  std::unique_ptr<RankGraph> graph(new RankGraph(rank, options, std::move(reader)));
  GENIE_RETURN_IF_ERROR(graph->Index());
  GENIE_RETURN_IF_ERROR(graph->LoadMetadataGroups());
  graph->Reset();
  return graph;
}

void RankGraph::AddWarning(const char* name, const std::string& message) {
  int& count = warning_counts_[name];
  ++count;
  if (count == 1) {
    warning_slot_[name] = warnings_.size();
    warnings_.push_back(WithName(name, message));
  } else {
    // Keep one line per name; say how many nodes it concerned.
    std::string& line = warnings_[warning_slot_[name]];
    auto pos = line.rfind(" [x");
    if (pos != std::string::npos) line.resize(pos);
    line += " [x" + std::to_string(count) + " nodes]";
  }
}

Status RankGraph::Index() {
  const std::string& path = reader_->path();
  std::string where = path + " (rank " + std::to_string(rank_) + ")";
  // Pass 1: id, offset, size, deps by id, in file order.
  std::vector<std::pair<uint32_t, NodeId>> data_raw, ctrl_raw;  // (file index, dep id)
  trace::NodeHeader header;
  std::string bytes;
  uint64_t offset = 0;
  while (true) {
    GENIE_ASSIGN_OR_RETURN(bool have, reader_->NextRaw(&bytes, &offset));
    if (!have) break;
    Status s = trace::ScanNodeHeader(bytes, &header);
    if (!s.ok()) {
      return Status::Corruption(where + ": message at byte " + std::to_string(offset) +
                                " (after " + std::to_string(ids_.size()) +
                                " nodes) is not a valid Node: " + s.message());
    }
    if (header.type >= type_counts_.size()) {
      return Status::InvalidArgument(WithName(
          kErrUnknownNodeType, where + ": node " + std::to_string(header.id) + " at byte " +
                                   std::to_string(offset) + " has node type " +
                                   std::to_string(header.type) +
                                   ", not a Chakra NodeType (0..7); corrupt or newer schema"));
    }
    if (ids_.size() >= kNone - 1) {
      return Status::Unsupported(where + ": more than 4 billion nodes in one rank's trace");
    }
    ++type_counts_[header.type];
    auto index = static_cast<uint32_t>(ids_.size());
    ids_.push_back(header.id);
    offsets_.push_back(offset);
    sizes_.push_back(static_cast<uint32_t>(bytes.size()));
    for (NodeId d : header.data_deps) data_raw.emplace_back(index, d);
    for (NodeId d : header.ctrl_deps) ctrl_raw.emplace_back(index, d);
  }
  // Sort by id (usually already sorted); position in the sorted order is the node index.
  const size_t n = ids_.size();
  bool sorted = std::is_sorted(ids_.begin(), ids_.end());
  std::vector<uint32_t> file_to_index;
  if (!sorted) {
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(),
              [this](uint32_t a, uint32_t b) { return ids_[a] < ids_[b]; });
    file_to_index.resize(n);
    std::vector<NodeId> ids(n);
    std::vector<uint64_t> offsets(n);
    std::vector<uint32_t> sizes(n);
    for (uint32_t i = 0; i < n; ++i) {
      ids[i] = ids_[order[i]];
      offsets[i] = offsets_[order[i]];
      sizes[i] = sizes_[order[i]];
      file_to_index[order[i]] = i;
    }
    ids_.swap(ids);
    offsets_.swap(offsets);
    sizes_.swap(sizes);
  }
  ids_.shrink_to_fit();
  offsets_.shrink_to_fit();
  sizes_.shrink_to_fit();
  for (uint32_t i = 1; i < n; ++i) {
    if (ids_[i - 1] == ids_[i]) {
      return Status::InvalidArgument(
          WithName(kErrDuplicateNodeId, where + ": node id " + std::to_string(ids_[i]) +
                                         " appears twice (bytes " +
                                         std::to_string(std::min(offsets_[i - 1], offsets_[i])) +
                                         " and " +
                                         std::to_string(std::max(offsets_[i - 1], offsets_[i])) +
                                         "); node ids must be unique"));
    }
  }
  auto to_index = [&](uint32_t file_index) { return sorted ? file_index : file_to_index[file_index]; };
  dense_ = n > 0 && ids_.back() - ids_.front() == n - 1;
  auto find = [this](NodeId id) { return Find(id); };

  // Resolves (file index, dep id) pairs into edges (dep -> node), freeing the raw pairs; names
  // the first ten deps that are not in the trace.
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  size_t missing_count = 0;
  std::string missing_list;
  auto resolve = [&](std::vector<std::pair<uint32_t, NodeId>>* raw, std::string_view kind) {
    edges.clear();
    edges.reserve(raw->size());
    missing_count = 0;
    missing_list.clear();
    for (const auto& [file_index, dep] : *raw) {
      uint32_t node = to_index(file_index);
      uint32_t d = find(dep);
      if (d == kNone) {
        if (++missing_count <= 10) {
          missing_list += " " + std::to_string(ids_[node]) + "->" + std::to_string(dep);
        }
        continue;
      }
      edges.emplace_back(d, node);
    }
    raw->clear();
    raw->shrink_to_fit();
    return where + ": " + std::to_string(missing_count) + " " + std::string(kind) +
           " name nodes that are not in the trace (node->dep:" + missing_list +
           (missing_count > 10 ? " ..." : "") + ")";
  };

  // Data deps must all resolve.
  std::string missing_text = resolve(&data_raw, "data_deps");
  if (missing_count > 0) {
    return Status::InvalidArgument(
        WithName(kErrDataDepMissing, missing_text + "; the trace is incomplete or from a different rank"));
  }
  BuildCsr(n, &edges, &data_begin_, &data_edges_);

  // Ctrl deps: per mode.
  use_ctrl_ = options_.ctrl_deps != ReadOptions::CtrlDeps::kOff;
  if (!use_ctrl_) ctrl_raw.clear();
  missing_text = resolve(&ctrl_raw, "ctrl_deps");
  if (missing_count > 0) {
    if (options_.ctrl_deps == ReadOptions::CtrlDeps::kOn) {
      return Status::InvalidArgument(
          WithName(kErrCtrlDepMissing, missing_text + "; use --ctrl-deps auto to ignore them"));
    }
    AddWarning(kWarnCtrlDepMissing, missing_text + "; those ctrl_deps are ignored");
  }
  BuildCsr(n, &edges, &ctrl_begin_, &ctrl_edges_);

  // Cycles: data_deps alone must be acyclic; with ctrl_deps, a cycle drops them (auto).
  std::vector<NodeId> cycle = FindCycle(false);
  if (!cycle.empty()) {
    return Status::InvalidArgument(
        WithName(kErrDataDepCycle, where + ": data_deps form a cycle: " + ListIds(cycle) +
                                    "; the trace cannot run (fix its data_deps)"));
  }
  if (use_ctrl_ && !ctrl_edges_.empty()) {
    cycle = FindCycle(true);
    if (!cycle.empty()) {
      std::string text = where + ": ctrl_deps form a cycle: " + ListIds(cycle);
      if (options_.ctrl_deps == ReadOptions::CtrlDeps::kOn) {
        return Status::InvalidArgument(
            WithName(kErrCtrlDepCycle, text + "; use --ctrl-deps auto or off"));
      }
      AddWarning(kWarnCtrlDepCycle, text + "; this rank uses data_deps only");
      use_ctrl_ = false;
    }
  }
  if (!use_ctrl_ || ctrl_edges_.empty()) {
    // No ctrl edges counted: drop the CSR index too (ForEachDependent checks ctrl_edges_).
    ctrl_begin_.clear();
    ctrl_begin_.shrink_to_fit();
    ctrl_edges_.clear();
    ctrl_edges_.shrink_to_fit();
  }
  return Status::Ok();
}

template <typename F>
void RankGraph::ForEachDependent(uint32_t i, F&& f) const {
  for (uint32_t e = data_begin_[i]; e < data_begin_[i + 1]; ++e) f(data_edges_[e]);
  if (!ctrl_edges_.empty()) {
    for (uint32_t e = ctrl_begin_[i]; e < ctrl_begin_[i + 1]; ++e) f(ctrl_edges_[e]);
  }
}

std::vector<NodeId> RankGraph::FindCycle(bool with_ctrl) const {
  const size_t n = ids_.size();
  std::vector<uint32_t> pending(n, 0);
  auto each = [&](uint32_t i, auto&& f) {
    for (uint32_t e = data_begin_[i]; e < data_begin_[i + 1]; ++e) f(data_edges_[e]);
    if (with_ctrl) {
      for (uint32_t e = ctrl_begin_[i]; e < ctrl_begin_[i + 1]; ++e) f(ctrl_edges_[e]);
    }
  };
  for (uint32_t i = 0; i < n; ++i) each(i, [&](uint32_t d) { ++pending[d]; });
  std::vector<uint32_t> stack;
  for (uint32_t i = 0; i < n; ++i) {
    if (pending[i] == 0) stack.push_back(i);
  }
  size_t processed = 0;
  while (!stack.empty()) {
    uint32_t i = stack.back();
    stack.pop_back();
    ++processed;
    each(i, [&](uint32_t d) {
      if (--pending[d] == 0) stack.push_back(d);
    });
  }
  if (processed == n) return {};
  // Every unprocessed node has an unprocessed dependency; walk dependencies until one repeats.
  std::vector<uint32_t> pred(n, kNone);
  for (uint32_t i = 0; i < n; ++i) {
    each(i, [&](uint32_t d) {
      if (pending[i] != 0 && pending[d] != 0 && pred[d] == kNone) pred[d] = i;
    });
  }
  uint32_t start = kNone;
  for (uint32_t i = 0; i < n && start == kNone; ++i) {
    if (pending[i] != 0) start = i;
  }
  std::vector<uint32_t> seen_at(n, kNone);
  std::vector<uint32_t> walk;
  uint32_t v = start;
  while (seen_at[v] == kNone) {
    seen_at[v] = static_cast<uint32_t>(walk.size());
    walk.push_back(v);
    v = pred[v];
    GENIE_CHECK(v != kNone) << "cycle walk left the unprocessed set";
  }
  // walk[seen_at[v]..] is the cycle, each a dependent of the next; print in dependency order.
  std::vector<NodeId> cycle;
  for (size_t k = walk.size(); k-- > seen_at[v];) cycle.push_back(ids_[walk[k]]);
  // Start at the smallest id so the message is stable.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  cycle.push_back(cycle.front());
  return cycle;
}

Status RankGraph::LoadMetadataGroups() {
  if (type_counts_[ChakraProtoMsg::METADATA_NODE] == 0) return Status::Ok();
  // PyTorch's process-group METADATA node keeps a JSON list of {"pg_name", "ranks", ...} in
  // inputs.values (often as the repr of a Python list of strings, so quotes may be escaped).
  reader_->Rewind();
  ChakraProtoMsg::Node node;
  uint64_t offset = 0;
  while (true) {
    GENIE_ASSIGN_OR_RETURN(bool have, reader_->Next(&node, &offset));
    if (!have) break;
    if (node.type() != ChakraProtoMsg::METADATA_NODE) continue;
    std::string text = node.inputs().values();
    std::string unescaped;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '"') continue;
      unescaped += text[i];
    }
    for (size_t i = 0; i < unescaped.size(); ++i) {
      if (unescaped[i] != '{') continue;
      int depth = 0;
      size_t j = i;
      for (; j < unescaped.size(); ++j) {
        if (unescaped[j] == '{') ++depth;
        if (unescaped[j] == '}' && --depth == 0) break;
      }
      if (j >= unescaped.size()) break;
      auto obj = nlohmann::json::parse(unescaped.substr(i, j - i + 1), nullptr, false);
      if (obj.is_object() && obj.contains("pg_name") && obj.contains("ranks") &&
          obj["ranks"].is_array()) {
        std::string pg = obj["pg_name"].is_string() ? obj["pg_name"].get<std::string>()
                                                     : obj["pg_name"].dump();
        auto group = trace::ParsePgName(pg);
        std::vector<int> ranks;
        bool ok = group.ok();
        for (const auto& r : obj["ranks"]) {
          if (!r.is_number_integer() || r.get<int64_t>() < 0) ok = false;
          else ranks.push_back(r.get<int>());
        }
        if (ok && *group != trace::kWorldGroupId && !ranks.empty()) {
          metadata_groups_.Add(*group, std::move(ranks));
        }
      }
      i = j;
    }
  }
  return Status::Ok();
}

uint32_t RankGraph::Find(NodeId id) const {
  if (dense_) {
    return id >= ids_.front() && id <= ids_.back() ? static_cast<uint32_t>(id - ids_.front())
                                                   : kNone;
  }
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  return it != ids_.end() && *it == id ? static_cast<uint32_t>(it - ids_.begin()) : kNone;
}

uint32_t RankGraph::IndexOf(NodeId id) const {
  uint32_t i = Find(id);
  GENIE_CHECK(i != kNone) << "node " << id << " is not in " << path();
  return i;
}

bool RankGraph::Contains(NodeId id) const { return Find(id) != kNone; }

void RankGraph::Reset() {
  const size_t n = ids_.size();
  pending_.assign(n, 0);
  state_.assign(n, kWaiting);
  ready_.clear();
  done_count_ = 0;
  for (uint32_t i = 0; i < n; ++i) ForEachDependent(i, [this](uint32_t d) { ++pending_[d]; });
  for (uint32_t i = 0; i < n; ++i) {
    if (pending_[i] == 0) {
      state_[i] = kReady;
      ready_.insert(ready_.end(), ids_[i]);
    }
  }
}

void RankGraph::Take(NodeId id) {
  uint32_t i = IndexOf(id);
  GENIE_CHECK(state_[i] == kReady) << "Take(" << id << ") on a node that is not ready, "
                                   << path();
  state_[i] = kTaken;
  ready_.erase(id);
}

void RankGraph::Complete(NodeId id) {
  uint32_t i = IndexOf(id);
  GENIE_CHECK(state_[i] == kTaken || state_[i] == kReady)
      << "Complete(" << id << ") on a node that was not ready or taken, " << path();
  if (state_[i] == kReady) ready_.erase(id);
  state_[i] = kDone;
  ++done_count_;
  ForEachDependent(i, [this](uint32_t d) {
    GENIE_CHECK(pending_[d] > 0) << "dependency count underflow";
    if (--pending_[d] == 0 && state_[d] == kWaiting) {
      state_[d] = kReady;
      ready_.insert(ids_[d]);
    }
  });
}

Result<Op> RankGraph::Load(NodeId id) {
  uint32_t i = Find(id);
  if (i == kNone) {
    return Status::NotFound(path() + " (rank " + std::to_string(rank_) + "): no node " +
                            std::to_string(id));
  }
  GENIE_RETURN_IF_ERROR(reader_->ReadAt(offsets_[i], sizes_[i], &scratch_));
  ChakraProtoMsg::Node node;
  if (!node.ParseFromString(scratch_)) {
    return Status::Corruption(path() + " (rank " + std::to_string(rank_) + "): node " +
                              std::to_string(id) + " at byte " + std::to_string(offsets_[i]) +
                              " is not a valid Chakra Node (corrupt attributes or IO info)");
  }
  std::vector<Quirk> quirks;
  auto op = DecodeOp(node, rank_, path(), options_, &quirks);
  for (const Quirk& q : quirks) AddWarning(q.name, q.message);
  return op;
}

}  // namespace genie::workload
