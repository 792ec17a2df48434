#include "genie/trace/chakra_custom.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "genie/trace/attributes.h"
#include "genie/trace/et_reader.h"
#include "genie/trace/msccl_xml.h"
#include "genie/trace/workload_files.h"

namespace genie::trace {
namespace {

namespace fs = std::filesystem;

// "COMM_RECV_NODE_tb0_step1" -> (0, 1).
bool TbStep(const std::string& name, int* tb, int* step) {
  const size_t t = name.rfind("_tb");
  const size_t s = name.rfind("_step");
  if (t == std::string::npos || s == std::string::npos || s < t) return false;
  *tb = std::atoi(name.c_str() + t + 3);
  *step = std::atoi(name.c_str() + s + 5);
  return true;
}

// One rank's trace, in file order, into `out` (its steps so far empty). `xml` is the embedded
// MSCCL-IR's steps of this rank, by (threadblock, step).
Status ReadRank(const std::string& path, int rank, int ranks,
                const std::map<std::pair<int, int>, const spec::CustomStep*>& xml,
                std::vector<spec::CustomStep>* out) {
  GENIE_ASSIGN_OR_RETURN(std::unique_ptr<EtReader> reader, EtReader::Open(path));
  std::map<uint64_t, uint32_t> step_of;  // SEND/RECV node id -> step index
  std::map<uint64_t, uint64_t> comp_of;  // COMP node id -> the RECV it reduces
  ChakraProtoMsg::Node n;
  uint64_t offset = 0;
  while (true) {
    GENIE_ASSIGN_OR_RETURN(bool more, reader->Next(&n, &offset));
    if (!more) break;
    const std::string where = NodeWhere(path, n.id(), offset);
    std::vector<uint32_t> deps;
    auto add_dep = [&](uint64_t d) {
      auto c = comp_of.find(d);
      if (c != comp_of.end()) d = c->second;
      auto it = step_of.find(d);
      if (it != step_of.end()) deps.push_back(it->second);
    };
    for (uint64_t d : n.data_deps()) add_dep(d);
    for (uint64_t d : n.ctrl_deps()) add_dep(d);
    if (n.type() == ChakraProtoMsg::COMP_NODE) {
      // A reduction of the message it depends on: that receive becomes a recv-reduce.
      for (uint64_t d : n.data_deps()) {
        auto it = step_of.find(d);
        if (it == step_of.end()) continue;
        spec::CustomStep& s = (*out)[it->second];
        if (s.kind == spec::CustomStepKind::kRecv) {
          s.kind = spec::CustomStepKind::kRecvReduce;
          comp_of[n.id()] = d;
        }
      }
      continue;
    }
    if (n.type() != ChakraProtoMsg::COMM_SEND_NODE && n.type() != ChakraProtoMsg::COMM_RECV_NODE) {
      continue;
    }
    int tb = 0, tb_step = 0;
    if (!TbStep(n.name(), &tb, &tb_step)) {
      return Status::Corruption(where + ": node name '" + n.name() + "' does not name its "
                                "MSCCL-IR threadblock and step (..._tb<T>_step<S>)");
    }
    auto x = xml.find({tb, tb_step});
    if (x == xml.end()) {
      return Status::Corruption(where + ": the embedded MSCCL-IR has no step " +
                                std::to_string(tb_step) + " in threadblock " + std::to_string(tb) +
                                " of gpu " + std::to_string(rank));
    }
    const bool send = n.type() == ChakraProtoMsg::COMM_SEND_NODE;
    const char* key = send ? "comm_dst" : "comm_src";
    auto peer = GetInt(n, key);
    if (!peer.ok()) return peer.status().WithContext(where);
    if (!peer->has_value() || **peer < 0 || **peer >= ranks || **peer == rank) {
      return Status::Corruption(where + ": " + key + " " +
                                (peer->has_value() ? std::to_string(**peer) : "(missing)") +
                                " is not another rank of the " + std::to_string(ranks) +
                                "-rank algorithm");
    }
    spec::CustomStep cs;
    cs.kind = send ? spec::CustomStepKind::kSend : spec::CustomStepKind::kRecv;
    (send ? cs.send_peer : cs.recv_peer) = static_cast<int>(**peer);
    // The range and channel of the MSCCL-IR step the node was lowered from (checked against
    // the buffer when the MSCCL-IR was parsed).
    cs.chunk = x->second->chunk;
    cs.count = x->second->count;
    cs.channel = x->second->channel;
    cs.tb = tb;
    cs.tb_step = tb_step;
    cs.deps = std::move(deps);
    cs.where = where;
    step_of[n.id()] = static_cast<uint32_t>(out->size());
    out->push_back(std::move(cs));
  }
  return Status::Ok();
}

}  // namespace

Result<spec::CustomAlgorithm> ReadChakraCustom(const std::string& path) {
  auto found = FindWorkload(path);
  if (!found.ok()) {
    return found.status().WithContext("custom collective '" + path + "' (expected an MSCCL-IR "
                                      ".xml file or the <prefix> of <prefix>.<rank>.et files)");
  }
  const WorkloadFiles& files = *found;
  const std::string prefix = (fs::path(files.dir) / files.name).string();

  // Byte ranges are not in the nodes (only sizes): take them from the MSCCL-IR the trace was
  // lowered from, which ASTRA-sim's converter stores in the metadata (normally rank 0's).
  std::string embedded, embedded_from;
  for (const std::string& file : files.rank_paths) {
    GENIE_ASSIGN_OR_RETURN(std::unique_ptr<EtReader> reader, EtReader::Open(file));
    auto text = GetString(reader->metadata(), "input_file");
    if (!text.ok()) return text.status().WithContext(file + ": metadata");
    if (text->has_value() && !(*text)->empty()) {
      embedded = **text;
      embedded_from = file;
      break;
    }
  }
  if (embedded.empty()) {
    return Status::Unsupported(files.rank_paths.front() + ": the trace's metadata does not carry "
                               "the MSCCL-IR it was lowered from (attribute input_file), so its "
                               "byte ranges are unknown; plan it from the .xml instead");
  }
  GENIE_ASSIGN_OR_RETURN(spec::CustomAlgorithm xml, ParseMscclXml(embedded, embedded_from + "[input_file]"));
  if (xml.ranks != files.world_size()) {
    return Status::Corruption(prefix + ": " + std::to_string(files.world_size()) + " trace files "
                              "but the embedded algorithm has " + std::to_string(xml.ranks) +
                              " ranks");
  }

  spec::CustomAlgorithm out;
  out.source = prefix;
  out.name = xml.name;
  out.collective = xml.collective;
  out.ranks = xml.ranks;
  out.chunks = xml.chunks;
  out.channels = xml.channels;
  out.steps.resize(static_cast<size_t>(out.ranks));
  for (int r = 0; r < out.ranks; ++r) {
    std::map<std::pair<int, int>, const spec::CustomStep*> by_tb_step;
    for (const spec::CustomStep& s : xml.steps[static_cast<size_t>(r)]) {
      by_tb_step.emplace(std::make_pair(s.tb, s.tb_step), &s);
    }
    GENIE_RETURN_IF_ERROR(ReadRank(files.rank_paths[static_cast<size_t>(r)], r, out.ranks,
                                   by_tb_step, &out.steps[static_cast<size_t>(r)]));
  }
  return out;
}

}  // namespace genie::trace
