#include "genie/synth/program.h"

#include <cmath>

#include "genie/trace/attributes.h"

namespace genie::synth {

const char* FamilyName(Family f) {
  switch (f) {
    case Family::kTp:
      return "tp";
    case Family::kSp:
      return "sp";
    case Family::kEp:
      return "ep";
    case Family::kDp:
      return "dp";
    case Family::kFsdp:
      return "fsdp";
    case Family::kPp:
      return "pp";
  }
  return "?";
}

ChakraProtoMsg::Node* Program::Begin(std::string_view family, std::string_view name,
                                     ChakraProtoMsg::NodeType type, const Id* deps, size_t n) {
  node_.Clear();
  node_.set_id(next_id_);
  std::string full;
  full.reserve(family.size() + scope_.size() + name.size() + 1);
  if (!family.empty()) full.append(family).append(".");
  full.append(scope_).append(name);
  node_.set_name(std::move(full));
  node_.set_type(type);
  for (size_t i = 0; i < n; ++i) {
    if (deps[i] != 0) node_.add_data_deps(deps[i]);
  }
  return &node_;
}

Program::Id Program::Finish() {
  if (status_.ok()) status_ = sink_->Write(node_);
  return next_id_++;
}

Program::Id Program::Compute(std::string_view name, double flops, double bytes, Deps deps,
                             Id after) {
  return Compute(name, flops, bytes, std::vector<Id>(deps), after);
}

Program::Id Program::Compute(std::string_view name, double flops, double bytes,
                             const std::vector<Id>& deps, Id after) {
  ChakraProtoMsg::Node* n = Begin("", name, ChakraProtoMsg::COMP_NODE, deps.data(), deps.size());
  if (after != 0) n->add_ctrl_deps(after);
  if (after_ != 0 && after_ != after) n->add_ctrl_deps(after_);
  after_ = 0;
  double ns = job_.gpu().TimeNs(flops, bytes);
  n->set_duration_micros(static_cast<uint64_t>(std::max(1.0, std::round(ns / 1000.0))));
  trace::AddBool(n, "is_cpu_op", false);
  trace::AddInt64(n, "num_ops", static_cast<int64_t>(std::max(1.0, flops)));
  trace::AddUint64(n, "tensor_size", static_cast<uint64_t>(std::max(1.0, bytes)));
  return Finish();
}

Program::Id Program::Collective(Family family, std::string_view name, CollectiveType type,
                                int64_t elements, GroupKind group, Deps deps) {
  return Collective(family, name, type, elements, group, std::vector<Id>(deps));
}

Program::Id Program::Collective(Family family, std::string_view name, CollectiveType type,
                                int64_t elements, GroupKind group, const std::vector<Id>& deps) {
  int64_t id = job_.placement().GroupId(group, rank_);
  if (id == 0 || elements <= 0) return 0;
  ChakraProtoMsg::Node* n =
      Begin(FamilyName(family), name, ChakraProtoMsg::COMM_COLL_NODE, deps.data(), deps.size());
  trace::AddBool(n, "is_cpu_op", false);
  trace::AddInt64(n, "comm_type", static_cast<int64_t>(type));
  trace::AddInt64(n, "comm_size", static_cast<int64_t>(job_.ElementBytes(elements)));
  trace::AddString(n, "pg_name", std::to_string(id));
  return Finish();
}

Program::Id Program::Send(std::string_view name, int peer, int64_t elements, int64_t tag,
                          Deps deps) {
  ChakraProtoMsg::Node* n = Begin(FamilyName(Family::kPp), name, ChakraProtoMsg::COMM_SEND_NODE,
                                  deps.begin(), deps.size());
  trace::AddBool(n, "is_cpu_op", false);
  trace::AddInt64(n, "comm_src", rank_);
  trace::AddInt64(n, "comm_dst", peer);
  trace::AddInt64(n, "comm_tag", tag);
  trace::AddInt64(n, "comm_size", static_cast<int64_t>(job_.ElementBytes(elements)));
  return Finish();
}

Program::Id Program::Recv(std::string_view name, int peer, int64_t elements, int64_t tag,
                          Deps deps) {
  ChakraProtoMsg::Node* n = Begin(FamilyName(Family::kPp), name, ChakraProtoMsg::COMM_RECV_NODE,
                                  deps.begin(), deps.size());
  trace::AddBool(n, "is_cpu_op", false);
  trace::AddInt64(n, "comm_src", peer);
  trace::AddInt64(n, "comm_dst", rank_);
  trace::AddInt64(n, "comm_tag", tag);
  trace::AddInt64(n, "comm_size", static_cast<int64_t>(job_.ElementBytes(elements)));
  return Finish();
}

}  // namespace genie::synth
