#include "genie/collective/custom.h"

#include <pugixml.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "et_def.pb.h"

namespace genie::collective {
namespace {

namespace fs = std::filesystem;

int LineOf(const std::string& text, ptrdiff_t offset) {
  if (offset < 0) return 0;
  int line = 1;
  for (ptrdiff_t i = 0; i < offset && i < static_cast<ptrdiff_t>(text.size()); ++i) {
    if (text[static_cast<size_t>(i)] == '\n') ++line;
  }
  return line;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<CustomAlgorithm> ParseMscclXml(const std::string& text, const std::string& name) {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size());
  if (!parsed) {
    return Status::Corruption(name + ":" + std::to_string(LineOf(text, parsed.offset)) +
                              ": not valid XML: " + parsed.description());
  }
  const pugi::xml_node algo = doc.child("algo");
  auto at = [&](const pugi::xml_node& n) {
    return name + ":" + std::to_string(LineOf(text, n.offset_debug()));
  };
  if (!algo) return Status::Corruption(name + ": no <algo> element (not MSCCL-IR)");
  CustomAlgorithm out;
  out.source = name;
  out.name = algo.attribute("name").as_string();
  out.collective = algo.attribute("coll").as_string();
  out.ranks = algo.attribute("ngpus").as_int(0);
  out.chunks = algo.attribute("nchunksperloop").as_int(0);
  out.channels = std::max(1, algo.attribute("nchannels").as_int(1));
  const bool inplace = algo.attribute("inplace").as_int(0) == 1;
  if (out.ranks < 1) return Status::Corruption(at(algo) + ": <algo> needs ngpus >= 1");
  if (out.chunks < 1) return Status::Corruption(at(algo) + ": <algo> needs nchunksperloop >= 1");
  out.steps.assign(static_cast<size_t>(out.ranks), {});
  std::vector<bool> seen(static_cast<size_t>(out.ranks), false);

  for (pugi::xml_node gpu : algo.children("gpu")) {
    const int id = gpu.attribute("id").as_int(-1);
    if (id < 0 || id >= out.ranks) {
      return Status::Corruption(at(gpu) + ": gpu id " + std::to_string(id) +
                                " is not a rank of this " + std::to_string(out.ranks) +
                                "-rank algorithm");
    }
    if (seen[static_cast<size_t>(id)]) {
      return Status::Corruption(at(gpu) + ": gpu " + std::to_string(id) + " appears twice");
    }
    seen[static_cast<size_t>(id)] = true;
    // Threadblocks ordered by (channel, id): each (peer, channel) connection is a FIFO, so
    // both ends enumerate its messages in the same order.
    std::vector<pugi::xml_node> tbs;
    for (pugi::xml_node tb : gpu.children("tb")) tbs.push_back(tb);
    std::stable_sort(tbs.begin(), tbs.end(), [](const pugi::xml_node& a, const pugi::xml_node& b) {
      return a.attribute("chan").as_int(0) < b.attribute("chan").as_int(0);
    });
    // (tb id, step index) -> index in out.steps[id] (or the deps a nop stands for).
    std::map<std::pair<int, int>, std::vector<uint32_t>> index;
    struct Pending { size_t step; int tb, s; std::string where; };
    std::vector<Pending> cross;
    std::vector<CustomStep>& mine = out.steps[static_cast<size_t>(id)];
    for (const pugi::xml_node& tb : tbs) {
      const int tb_id = tb.attribute("id").as_int(-1);
      const int send = tb.attribute("send").as_int(-1);
      const int recv = tb.attribute("recv").as_int(-1);
      const int chan = tb.attribute("chan").as_int(0);
      std::vector<uint32_t> prev;  // the tb's previous step (steps in a tb run in order)
      for (pugi::xml_node st : tb.children("step")) {
        const std::string where = at(st);
        const std::string type = st.attribute("type").as_string();
        const int s = st.attribute("s").as_int(-1);
        CustomStep cs;
        cs.channel = chan;
        cs.where = where;
        bool needs_send = false, needs_recv = false;
        if (type == "s") {
          cs.kind = StepKind::kSend;
          needs_send = true;
        } else if (type == "r") {
          cs.kind = StepKind::kRecv;
          needs_recv = true;
        } else if (type == "rrc") {
          cs.kind = StepKind::kRecvReduce;
          needs_recv = true;
        } else if (type == "rcs") {
          cs.kind = StepKind::kRecvCopySend;
          needs_send = needs_recv = true;
        } else if (type == "rrs" || type == "rrcs") {
          cs.kind = StepKind::kRecvReduceSend;
          needs_send = needs_recv = true;
        } else if (type == "nop") {
          index[{tb_id, s}] = prev;
          continue;
        } else if (type == "cpy" || type == "re") {
          return Status::Unsupported(where + ": local step type '" + type +
                                     "' (copy/reduce inside one rank) is not supported yet");
        } else {
          return Status::Corruption(where + ": unknown step type '" + type +
                                    "' (expected s, r, rrc, rcs, rrs, rrcs or nop)");
        }
        auto peer_ok = [&](int p) { return p >= 0 && p < out.ranks && p != id; };
        if (needs_send) {
          if (!peer_ok(send)) {
            return Status::Corruption(where + ": step " + std::to_string(s) + " of gpu " +
                                      std::to_string(id) + " sends to rank " +
                                      std::to_string(send) + ", which is not another rank of "
                                      "this " + std::to_string(out.ranks) + "-rank algorithm");
          }
          cs.send_peer = send;
        }
        if (needs_recv) {
          if (!peer_ok(recv)) {
            return Status::Corruption(where + ": step " + std::to_string(s) + " of gpu " +
                                      std::to_string(id) + " receives from rank " +
                                      std::to_string(recv) + ", which is not another rank of "
                                      "this " + std::to_string(out.ranks) + "-rank algorithm");
          }
          cs.recv_peer = recv;
        }
        // The range: the send side reads srcbuf, a receive writes dstbuf; in place they agree.
        const bool reads = cs.kind == StepKind::kSend;
        const std::string buf = st.attribute(reads ? "srcbuf" : "dstbuf").as_string();
        const int off = st.attribute(reads ? "srcoff" : "dstoff").as_int(-1);
        const int cnt = st.attribute("cnt").as_int(0);
        if (buf == "s" || (buf == "o" && !inplace)) {
          return Status::Unsupported(where + ": buffer '" + buf + "' (only the in-place input "
                                     "buffer 'i' is supported)");
        }
        if (buf != "i" && buf != "o") {
          return Status::Corruption(where + ": unknown buffer '" + buf + "' (expected i, o, s)");
        }
        if (off < 0 || cnt < 1 || off + cnt > out.chunks) {
          return Status::Corruption(where + ": chunks [" + std::to_string(off) + ", " +
                                    std::to_string(off + cnt) + ") fall outside the " +
                                    std::to_string(out.chunks) + " chunks of the buffer");
        }
        cs.chunk = static_cast<uint32_t>(off);
        cs.count = static_cast<uint32_t>(cnt);
        cs.deps = prev;
        const size_t me = mine.size();
        if (st.attribute("hasdep").as_int(0) == 1 || st.attribute("depid").as_int(-1) >= 0) {
          const int depid = st.attribute("depid").as_int(-1);
          const int deps = st.attribute("deps").as_int(-1);
          if (depid >= 0) cross.push_back({me, depid, deps, where});
        }
        mine.push_back(std::move(cs));
        prev = {static_cast<uint32_t>(me)};
        index[{tb_id, s}] = prev;
      }
    }
    for (const Pending& p : cross) {
      auto it = index.find({p.tb, p.s});
      if (it == index.end()) {
        return Status::Corruption(p.where + ": depends on step " + std::to_string(p.s) +
                                  " of threadblock " + std::to_string(p.tb) +
                                  ", which gpu " + std::to_string(id) + " does not have");
      }
      for (uint32_t d : it->second) {
        if (d >= p.step) {
          return Status::Corruption(p.where + ": depends on a later step (threadblock " +
                                    std::to_string(p.tb) + " step " + std::to_string(p.s) +
                                    "); reorder the threadblocks");
        }
        mine[p.step].deps.push_back(d);
      }
    }
  }
  for (int r = 0; r < out.ranks; ++r) {
    if (!seen[static_cast<size_t>(r)]) {
      return Status::Corruption(name + ": gpu " + std::to_string(r) + " of " +
                                std::to_string(out.ranks) + " is missing");
    }
  }
  return out;
}

namespace {

int64_t IntAttr(const ChakraProtoMsg::Node& n, const std::string& key, int64_t def) {
  for (const auto& a : n.attr()) {
    if (a.name() != key) continue;
    switch (a.value_case()) {
      case ChakraProtoMsg::AttributeProto::kInt32Val: return a.int32_val();
      case ChakraProtoMsg::AttributeProto::kInt64Val: return a.int64_val();
      case ChakraProtoMsg::AttributeProto::kUint32Val: return a.uint32_val();
      case ChakraProtoMsg::AttributeProto::kUint64Val: return static_cast<int64_t>(a.uint64_val());
      case ChakraProtoMsg::AttributeProto::kSint32Val: return a.sint32_val();
      case ChakraProtoMsg::AttributeProto::kSint64Val: return a.sint64_val();
      default: return def;
    }
  }
  return def;
}

// Reads varint32-delimited messages.
bool NextMessage(const std::string& data, size_t* at, std::string_view* out) {
  uint64_t len = 0;
  int shift = 0;
  while (true) {
    if (*at >= data.size() || shift > 28) return false;
    const uint8_t c = static_cast<uint8_t>(data[(*at)++]);
    len |= static_cast<uint64_t>(c & 0x7f) << shift;
    if (!(c & 0x80)) break;
    shift += 7;
  }
  if (*at + len > data.size()) return false;
  *out = std::string_view(data).substr(*at, len);
  *at += len;
  return true;
}

// "COMM_RECV_NODE_tb0_step1" -> (0, 1).
bool TbStep(const std::string& name, int* tb, int* step) {
  const size_t t = name.rfind("_tb");
  const size_t s = name.rfind("_step");
  if (t == std::string::npos || s == std::string::npos || s < t) return false;
  *tb = std::atoi(name.c_str() + t + 3);
  *step = std::atoi(name.c_str() + s + 5);
  return true;
}

}  // namespace

Result<CustomAlgorithm> LoadChakraCustom(const std::string& prefix_in) {
  std::string prefix = prefix_in;
  // Accept one of the files too: strip ".<rank>.et".
  if (prefix.size() > 3 && prefix.compare(prefix.size() - 3, 3, ".et") == 0) {
    prefix.resize(prefix.size() - 3);
    const size_t dot = prefix.rfind('.');
    if (dot != std::string::npos) prefix.resize(dot);
  }
  CustomAlgorithm out;
  out.source = prefix;
  std::vector<std::vector<ChakraProtoMsg::Node>> nodes;
  std::string embedded;  // the MSCCL-IR the trace was lowered from, when its metadata has it
  for (int r = 0;; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    if (!fs::exists(path)) break;
    GENIE_ASSIGN_OR_RETURN(std::string data, ReadFile(path));
    if (data.size() >= 2 && static_cast<uint8_t>(data[0]) == 0x1f &&
        static_cast<uint8_t>(data[1]) == 0x8b) {
      return Status::Unsupported(path + ": gzip-compressed custom collective traces are not "
                                 "supported; gunzip it first");
    }
    size_t at = 0;
    std::string_view msg;
    if (!NextMessage(data, &at, &msg)) {
      return Status::Corruption(path + ": no GlobalMetadata message at the start");
    }
    ChakraProtoMsg::GlobalMetadata meta;
    if (!meta.ParseFromArray(msg.data(), static_cast<int>(msg.size()))) {
      return Status::Corruption(path + ": GlobalMetadata does not parse");
    }
    for (const auto& a : meta.attr()) {
      if (a.name() == "input_file" && a.has_string_val() && embedded.empty()) {
        embedded = a.string_val();
      }
    }
    nodes.emplace_back();
    while (at < data.size()) {
      if (!NextMessage(data, &at, &msg)) {
        return Status::Corruption(path + ": truncated message at byte " + std::to_string(at));
      }
      ChakraProtoMsg::Node n;
      if (!n.ParseFromArray(msg.data(), static_cast<int>(msg.size()))) {
        return Status::Corruption(path + ": node at byte " + std::to_string(at) +
                                  " does not parse");
      }
      nodes.back().push_back(std::move(n));
    }
  }
  if (nodes.empty()) {
    return Status::NotFound("no Chakra custom collective at " + prefix + ".0.et (expected "
                            "<prefix>.<rank>.et files)");
  }
  // Byte ranges are not in the nodes (only sizes): take them from the MSCCL-IR the trace was
  // lowered from, which ASTRA-sim's converter stores in the metadata.
  if (embedded.empty()) {
    return Status::Unsupported(prefix + ".0.et: the trace's metadata does not carry the MSCCL-IR "
                               "it was lowered from (attribute input_file), so its byte ranges "
                               "are unknown; plan it from the .xml instead");
  }
  GENIE_ASSIGN_OR_RETURN(CustomAlgorithm xml, ParseMscclXml(embedded, prefix + ".0.et[input_file]"));
  if (xml.ranks != static_cast<int>(nodes.size())) {
    return Status::Corruption(prefix + ": " + std::to_string(nodes.size()) + " trace files but "
                              "the embedded algorithm has " + std::to_string(xml.ranks) + " ranks");
  }
  out.name = xml.name;
  out.collective = xml.collective;
  out.ranks = xml.ranks;
  out.chunks = xml.chunks;
  out.channels = xml.channels;
  out.steps.resize(nodes.size());
  for (size_t r = 0; r < nodes.size(); ++r) {
    const std::string file = prefix + "." + std::to_string(r) + ".et";
    // XML steps of this rank by (tb, step) for the ranges.
    std::map<uint64_t, uint32_t> step_of;  // node id -> step index
    std::map<uint64_t, uint64_t> comp_of;  // COMP node -> the RECV it reduces
    for (const auto& n : nodes[r]) {
      const std::string where = file + " node " + std::to_string(n.id());
      std::vector<uint32_t> deps;
      auto add_deps = [&](uint64_t d) {
        auto c = comp_of.find(d);
        if (c != comp_of.end()) d = c->second;
        auto it = step_of.find(d);
        if (it != step_of.end()) deps.push_back(it->second);
      };
      for (uint64_t d : n.data_deps()) add_deps(d);
      for (uint64_t d : n.ctrl_deps()) add_deps(d);
      if (n.type() == ChakraProtoMsg::COMP_NODE) {
        // A reduction of the message it depends on: that receive becomes a recv-reduce.
        for (uint64_t d : n.data_deps()) {
          auto it = step_of.find(d);
          if (it == step_of.end()) continue;
          CustomStep& s = out.steps[r][it->second];
          if (s.kind == StepKind::kRecv) {
            s.kind = StepKind::kRecvReduce;
            comp_of[n.id()] = d;
          }
        }
        continue;
      }
      if (n.type() != ChakraProtoMsg::COMM_SEND_NODE && n.type() != ChakraProtoMsg::COMM_RECV_NODE) {
        continue;
      }
      int tb = 0, sidx = 0;
      if (!TbStep(n.name(), &tb, &sidx)) {
        return Status::Corruption(where + ": node name '" + n.name() + "' does not name its "
                                  "MSCCL-IR threadblock and step (..._tb<T>_step<S>)");
      }
      {
        // The embedded MSCCL-IR step (gpu r, threadblock tb, step s) holds the range.
        static thread_local std::string cached_text;
        static thread_local pugi::xml_document cached;
        if (cached_text != embedded) {
          cached.load_buffer(embedded.data(), embedded.size());
          cached_text = embedded;
        }
        pugi::xml_node gpu = cached.child("algo").find_child_by_attribute(
            "gpu", "id", std::to_string(r).c_str());
        pugi::xml_node tbn = gpu.find_child_by_attribute("tb", "id", std::to_string(tb).c_str());
        pugi::xml_node st = tbn.find_child_by_attribute("step", "s", std::to_string(sidx).c_str());
        if (!st) {
          return Status::Corruption(where + ": the embedded MSCCL-IR has no step " +
                                    std::to_string(sidx) + " in threadblock " + std::to_string(tb));
        }
        CustomStep cs;
        const bool send = n.type() == ChakraProtoMsg::COMM_SEND_NODE;
        cs.kind = send ? StepKind::kSend : StepKind::kRecv;
        const int peer = static_cast<int>(IntAttr(n, send ? "comm_dst" : "comm_src", -1));
        if (peer < 0 || peer >= out.ranks || peer == static_cast<int>(r)) {
          return Status::Corruption(where + ": " + (send ? "comm_dst " : "comm_src ") +
                                    std::to_string(peer) + " is not another rank of the " +
                                    std::to_string(out.ranks) + "-rank algorithm");
        }
        (send ? cs.send_peer : cs.recv_peer) = peer;
        cs.chunk = static_cast<uint32_t>(st.attribute(send ? "srcoff" : "dstoff").as_int(0));
        cs.count = static_cast<uint32_t>(st.attribute("cnt").as_int(1));
        cs.channel = tbn.attribute("chan").as_int(0);
        cs.deps = deps;
        cs.where = where;
        step_of[n.id()] = static_cast<uint32_t>(out.steps[r].size());
        out.steps[r].push_back(std::move(cs));
      }
    }
  }
  return out;
}

Result<std::shared_ptr<const CustomAlgorithm>> LoadCustom(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const CustomAlgorithm>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(path);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<const CustomAlgorithm> loaded;
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".xml") == 0) {
    GENIE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    GENIE_ASSIGN_OR_RETURN(CustomAlgorithm a, ParseMscclXml(text, path));
    loaded = std::make_shared<const CustomAlgorithm>(std::move(a));
  } else {
    GENIE_ASSIGN_OR_RETURN(CustomAlgorithm a, LoadChakraCustom(path));
    loaded = std::make_shared<const CustomAlgorithm>(std::move(a));
  }
  std::lock_guard<std::mutex> lock(mu);
  cache[path] = loaded;
  return loaded;
}

Result<std::string> ResolveCustomPath(const std::string& path, const std::string& config_dir) {
  std::vector<std::string> tried;
  auto exists = [](const fs::path& p) {
    // A Chakra prefix exists when its rank-0 file does.
    return fs::exists(p) || fs::exists(p.string() + ".0.et");
  };
  const fs::path p(path);
  if (p.is_absolute()) {
    if (exists(p)) return p.string();
    tried.push_back(p.string());
  } else {
    if (!config_dir.empty()) {
      const fs::path c = fs::path(config_dir) / p;
      if (exists(c)) return c.string();
      tried.push_back(c.string());
    }
    const fs::path w = fs::current_path() / p;
    if (exists(w)) return w.string();
    tried.push_back(w.string());
  }
  std::string list;
  for (const std::string& t : tried) list += (list.empty() ? "" : ", ") + t;
  return Status::NotFound("custom collective '" + path + "' not found; looked in: " + list);
}

}  // namespace genie::collective
