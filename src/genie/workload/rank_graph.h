// RankGraph: one rank's Chakra trace as a dependency graph the executor walks. Open makes one
// indexing pass (node id, type, deps, file offset; ~20-40 bytes per node, no node bodies) and
// resolves forward references, missing deps and cycles under ReadOptions::ctrl_deps; whole
// nodes are decoded lazily by Load, re-read from the file. The ready set holds nodes whose
// counted deps are all complete and that were not taken yet, in ascending id order (ASTRA-sim
// issue order). Owns its file. One thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/trace/comm_groups.h"
#include "genie/trace/et_reader.h"
#include "genie/workload/op.h"
#include "genie/workload/read_options.h"

namespace genie::workload {

class RankGraph {
 public:
  static Result<std::unique_ptr<RankGraph>> Open(const std::string& path, int rank,
                                                 const ReadOptions& options);

  int rank() const { return rank_; }
  const std::string& path() const { return reader_->path(); }
  size_t size() const { return ids_.size(); }                 // nodes in the trace
  const std::vector<NodeId>& ids() const { return ids_; }     // all node ids, ascending
  // Named quirk warnings, once each: "[name] message" (Load may add more).
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::map<std::string, int>& warning_counts() const { return warning_counts_; }
  const trace::CommGroups& metadata_groups() const { return metadata_groups_; }
  // Whether ctrl_deps count on this rank (false with --ctrl-deps off or after a ctrl cycle).
  bool ctrl_deps_counted() const { return use_ctrl_; }
  // Node count per Chakra NodeType value as written (index 0..7).
  const std::vector<size_t>& type_counts() const { return type_counts_; }

  const std::set<NodeId>& ready() const { return ready_; }  // ascending
  void Take(NodeId id);      // leave the ready set (issued); GENIE_CHECKs it was ready
  void Complete(NodeId id);  // done; dependents whose deps are now done become ready
  bool AllComplete() const { return done_count_ == ids_.size(); }
  size_t completed() const { return done_count_; }

  // Decoded node, all quirks resolved; errors name file, rank, node id.
  Result<Op> Load(NodeId id);
  bool Contains(NodeId id) const;
  void Reset();  // every node not-done again (next iteration)

 private:
  enum State : uint8_t { kWaiting, kReady, kTaken, kDone };
  RankGraph(int rank, ReadOptions options, std::unique_ptr<trace::EtReader> reader)
      : rank_(rank), options_(options), reader_(std::move(reader)) {}
  Status Index();
  void AddWarning(const char* name, const std::string& message);
  uint32_t IndexOf(NodeId id) const;  // GENIE_CHECKs presence
  uint32_t Find(NodeId id) const;     // index or UINT32_MAX
  // Kahn's algorithm over data edges (+ ctrl edges if `with_ctrl`); returns a cycle (node ids
  // in dependency order) or empty.
  std::vector<NodeId> FindCycle(bool with_ctrl) const;
  template <typename F>
  void ForEachDependent(uint32_t i, F&& f) const;
  Status LoadMetadataGroups();

  int rank_;
  ReadOptions options_;
  std::unique_ptr<trace::EtReader> reader_;

  // Index, sorted by id; position = internal node index.
  std::vector<NodeId> ids_;
  bool dense_ = false;  // ids_ are consecutive (the usual case): index = id - ids_[0]
  std::vector<uint64_t> offsets_;
  std::vector<uint32_t> sizes_;
  // Dependents in CSR form: data edges and (separately) ctrl edges that point to present nodes.
  std::vector<uint32_t> data_begin_, data_edges_;
  std::vector<uint32_t> ctrl_begin_, ctrl_edges_;
  bool use_ctrl_ = true;

  std::vector<uint32_t> pending_;  // counted deps not yet complete
  std::vector<uint8_t> state_;
  std::set<NodeId> ready_;
  size_t done_count_ = 0;

  std::vector<size_t> type_counts_ = std::vector<size_t>(8, 0);
  std::vector<std::string> warnings_;
  std::map<std::string, int> warning_counts_;
  std::map<std::string, size_t> warning_slot_;
  trace::CommGroups metadata_groups_;
  std::string scratch_;
};

}  // namespace genie::workload
