// Program: builds one rank's Chakra graph node by node and hands each node to a NodeSink as soon
// as it is complete, so a rank's graph is never held in memory (the writer streams it to disk,
// tests collect it). Node ids count up from 1 in emission order and every dependency points to
// an earlier node, so the file is in topological order. Id 0 means "no node": a collective on a
// group of one rank is not emitted and returns 0, and dependency lists drop zeros, so emitters
// chain `a ? a : b` without special cases. Every communication node's name starts with its
// family ("tp.", "sp.", "ep.", "dp.", "fsdp.", "pp.") — docs/synth.md gives each family's bytes.
// Owned by one thread (the writer runs one Program per rank at a time per thread).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "et_def.pb.h"
#include "genie/common/status.h"
#include "genie/synth/job.h"
#include "genie/workload/op.h"

namespace genie::synth {

class NodeSink {
 public:
  virtual ~NodeSink() = default;
  virtual Status Write(const ChakraProtoMsg::Node& node) = 0;
};

// Collects nodes in memory (tests, small workloads).
class VectorSink : public NodeSink {
 public:
  Status Write(const ChakraProtoMsg::Node& node) override {
    nodes.push_back(node);
    return Status::Ok();
  }
  std::vector<ChakraProtoMsg::Node> nodes;
};

enum class Family { kTp, kSp, kEp, kDp, kFsdp, kPp };
const char* FamilyName(Family f);  // "tp", "sp", "ep", "dp", "fsdp", "pp"

class Program {
 public:
  using Id = uint64_t;
  using Deps = std::initializer_list<Id>;

  Program(const Job& job, int rank, NodeSink* sink) : job_(job), rank_(rank), sink_(sink) {}

  const Job& job() const { return job_; }
  int rank() const { return rank_; }
  // Prepended to node names after the family ("mb3.L12."), set by the step emitter.
  void set_scope(std::string scope) { scope_ = std::move(scope); }
  // The next compute node gets a control dependency on `id` (the schedule's issue order).
  void set_after(Id id) { after_ = id; }

  // A GPU kernel: roofline duration on the job's GPU; num_ops and tensor_size for simulators
  // that apply their own roofline. `after` is a control dependency (issue order), 0 for none.
  Id Compute(std::string_view name, double flops, double bytes, Deps deps, Id after = 0);
  Id Compute(std::string_view name, double flops, double bytes, const std::vector<Id>& deps,
             Id after = 0);
  // `elements` of the model's dtype, in ASTRA-sim's comm_size meaning (all-gather: each rank's
  // input; all-reduce, reduce-scatter, all-to-all: the whole buffer). 0 when the group has one
  // member or there is nothing to send.
  Id Collective(Family family, std::string_view name, CollectiveType type, int64_t elements,
                GroupKind group, Deps deps);
  Id Collective(Family family, std::string_view name, CollectiveType type, int64_t elements,
                GroupKind group, const std::vector<Id>& deps);
  Id Send(std::string_view name, int peer, int64_t elements, int64_t tag, Deps deps);
  Id Recv(std::string_view name, int peer, int64_t elements, int64_t tag, Deps deps);

  // The first error a sink returned (later nodes are dropped after it).
  const Status& status() const { return status_; }
  uint64_t nodes() const { return next_id_ - 1; }

 private:
  ChakraProtoMsg::Node* Begin(std::string_view family, std::string_view name,
                              ChakraProtoMsg::NodeType type, const Id* deps, size_t n);
  Id Finish();

  const Job& job_;
  int rank_;
  NodeSink* sink_;
  std::string scope_;
  Id after_ = 0;
  Status status_ = Status::Ok();
  Id next_id_ = 1;
  ChakraProtoMsg::Node node_;  // reused: one allocation for the whole rank
};

}  // namespace genie::synth
