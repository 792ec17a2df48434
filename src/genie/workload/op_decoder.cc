#include "genie/workload/op_decoder.h"

#include "genie/trace/attributes.h"
#include "genie/trace/comm_groups.h"

namespace genie::workload {
namespace {

std::string Where(const std::string& path, int rank, const ChakraProtoMsg::Node& node) {
  std::string s = path + " (rank " + std::to_string(rank) + "): node " + std::to_string(node.id());
  if (!node.name().empty()) s += " '" + node.name() + "'";
  return s;
}

Status Named(const char* name, const std::string& where, const std::string& what) {
  return Status::InvalidArgument("[" + std::string(name) + "] " + where + ": " + what);
}

}  // namespace

Result<ReadOptions::CtrlDeps> ParseCtrlDeps(const std::string& text) {
  if (text == "auto") return ReadOptions::CtrlDeps::kAuto;
  if (text == "on" || text == "true" || text == "1") return ReadOptions::CtrlDeps::kOn;
  if (text == "off" || text == "false" || text == "0") return ReadOptions::CtrlDeps::kOff;
  return Status::InvalidArgument("--ctrl-deps '" + text + "': expected auto, on or off");
}

const char* CtrlDepsName(ReadOptions::CtrlDeps mode) {
  switch (mode) {
    case ReadOptions::CtrlDeps::kAuto: return "auto";
    case ReadOptions::CtrlDeps::kOn: return "on";
    case ReadOptions::CtrlDeps::kOff: return "off";
  }
  return "auto";
}

Result<Op> DecodeOp(const ChakraProtoMsg::Node& node, int rank, const std::string& path,
                    const ReadOptions& options, std::vector<Quirk>* quirks) {
  Op op;
  op.id = node.id();
  op.name = node.name();
  // Attribute errors all read the same way.
  auto bad = [&](const Status& s) {
    return Named(kErrBadAttribute, Where(path, rank, node), s.message());
  };
#define GENIE_ATTR(var, expr)        \
  auto var##_r = (expr);             \
  if (!var##_r.ok()) return bad(var##_r.status()); \
  auto var = *var##_r

  switch (node.type()) {
    case ChakraProtoMsg::INVALID_NODE: op.kind = OpKind::kInvalid; break;
    case ChakraProtoMsg::METADATA_NODE: op.kind = OpKind::kMetadata; break;
    case ChakraProtoMsg::MEM_LOAD_NODE: op.kind = OpKind::kMemLoad; break;
    case ChakraProtoMsg::MEM_STORE_NODE: op.kind = OpKind::kMemStore; break;
    case ChakraProtoMsg::COMP_NODE: op.kind = OpKind::kCompute; break;
    case ChakraProtoMsg::COMM_SEND_NODE: op.kind = OpKind::kSend; break;
    case ChakraProtoMsg::COMM_RECV_NODE: op.kind = OpKind::kRecv; break;
    case ChakraProtoMsg::COMM_COLL_NODE: op.kind = OpKind::kCollective; break;
    default:
      return Named(kErrUnknownNodeType, Where(path, rank, node),
                   "node type " + std::to_string(static_cast<int>(node.type())) +
                       " is not a Chakra NodeType (0..7); the file may be corrupt or from a "
                       "newer schema");
  }
  op.data_deps.assign(node.data_deps().begin(), node.data_deps().end());
  op.ctrl_deps.assign(node.ctrl_deps().begin(), node.ctrl_deps().end());
  if (node.duration_micros() > static_cast<uint64_t>(INT64_MAX / 1000)) {
    return Named(kErrBadAttribute, Where(path, rank, node),
                 "duration_micros " + std::to_string(node.duration_micros()) + " is too large");
  }
  op.duration_ns = static_cast<TimeNs>(node.duration_micros()) * 1000;

  GENIE_ATTR(is_cpu, trace::GetBool(node, "is_cpu_op"));
  op.is_cpu_op = is_cpu.value_or(false);
  GENIE_ATTR(num_ops, trace::GetUint(node, "num_ops"));
  op.num_ops = num_ops.value_or(0);
  GENIE_ATTR(tensor_size, trace::GetUint(node, "tensor_size"));
  op.tensor_size = tensor_size.value_or(0);
  GENIE_ATTR(tensor_loc, trace::GetInt(node, "tensor_loc"));
  op.tensor_loc = tensor_loc.value_or(0);
  GENIE_ATTR(priority, trace::GetInt(node, "comm_priority"));
  op.priority = priority.value_or(0);
  GENIE_ATTR(tag, trace::GetInt(node, "comm_tag"));
  op.tag = tag.value_or(0);
  GENIE_ATTR(pg_name, trace::GetString(node, "pg_name"));
  if (pg_name) {
    auto group = trace::ParsePgName(*pg_name);
    if (!group.ok()) return bad(group.status());
    op.group = *group;
  }
  GENIE_ATTR(dims, trace::GetBoolList(node, "involved_dim"));
  if (!dims) {
    GENIE_ATTR(dims2, trace::GetBoolList(node, "involve_dims"));
    dims = dims2;
  }
  if (dims) op.involved_dim = *dims;

  bool is_comm = op.kind == OpKind::kCollective || op.kind == OpKind::kSend ||
                 op.kind == OpKind::kRecv;
  if (op.kind == OpKind::kCollective) {
    GENIE_ATTR(comm_type, trace::GetInt(node, "comm_type"));
    if (!comm_type) {
      if (op.is_cpu_op) {
        // PyTorch's CPU-side c10d:: wrapper of a collective: the GPU kernel is a separate node.
        op.kind = OpKind::kCompute;
        quirks->push_back({kWarnCpuCollectiveWrapper,
                           Where(path, rank, node) +
                               " is a COMM_COLL with is_cpu_op and no comm_type (PyTorch's "
                               "CPU-side c10d wrapper); run as a CPU op of its duration"});
        return op;
      }
      return Named(kErrMissingCommType, Where(path, rank, node),
                   "COMM_COLL without comm_type; add the attribute (0 = ALL_REDUCE ... 9 = "
                   "BARRIER) or mark the node is_cpu_op");
    }
    if (*comm_type < 0 || *comm_type > static_cast<int64_t>(CollectiveType::kBarrier)) {
      return Named(kErrUnknownCollectiveType, Where(path, rank, node),
                   "comm_type " + std::to_string(*comm_type) +
                       " is not a Chakra CollectiveCommType (0..9)");
    }
    op.coll_type = static_cast<CollectiveType>(*comm_type);
  }
  if (is_comm) {
    GENIE_ATTR(comm_size, trace::GetUint(node, "comm_size"));
    if (comm_size) {
      op.comm_size = *comm_size;
    } else if (op.kind == OpKind::kCollective && op.coll_type == CollectiveType::kBarrier) {
      op.comm_size = 0;
    } else if (op.kind != OpKind::kCollective && tensor_size) {
      op.comm_size = *tensor_size;
      quirks->push_back({kWarnP2pSizeFromTensorSize,
                         Where(path, rank, node) +
                             " has no comm_size; its tensor_size (" + std::to_string(*tensor_size) +
                             " bytes) is used as the message size"});
    } else if (options.default_comm_size) {
      op.comm_size = *options.default_comm_size;
      quirks->push_back({kWarnDefaultCommSize,
                         Where(path, rank, node) + " has no comm_size; --default-comm-size " +
                             std::to_string(*options.default_comm_size) + " bytes is used"});
    } else {
      return Named(kErrMissingCommSize, Where(path, rank, node),
                   std::string(op.kind == OpKind::kCollective ? "collective" : "point-to-point") +
                       " without comm_size; fix the trace or pass --default-comm-size BYTES");
    }
  }
  if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
    GENIE_ATTR(src, trace::GetInt(node, "comm_src"));
    GENIE_ATTR(dst, trace::GetInt(node, "comm_dst"));
    for (auto peer : {src, dst}) {
      if (peer && (*peer < 0 || *peer > INT32_MAX)) {
        return Named(kErrBadAttribute, Where(path, rank, node),
                     "peer rank " + std::to_string(*peer) + " is out of range");
      }
    }
    // The own rank is implied for the side the node is on; a missing peer stays -1.
    op.src = src ? static_cast<int>(*src) : (op.kind == OpKind::kSend ? rank : -1);
    op.dst = dst ? static_cast<int>(*dst) : (op.kind == OpKind::kRecv ? rank : -1);
  }
#undef GENIE_ATTR
  return op;
}

}  // namespace genie::workload
