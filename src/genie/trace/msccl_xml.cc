#include "genie/trace/msccl_xml.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "genie/common/input_file.h"

namespace genie::trace {
namespace {

// 1-based line of a byte offset in `text` (pugixml reports offsets); 0 when unknown.
int LineOf(const std::string& text, ptrdiff_t offset) {
  if (offset < 0) return 0;
  int line = 1;
  for (ptrdiff_t i = 0; i < offset && i < static_cast<ptrdiff_t>(text.size()); ++i) {
    if (text[static_cast<size_t>(i)] == '\n') ++line;
  }
  return line;
}

}  // namespace

Result<spec::CustomAlgorithm> ParseMscclXml(const std::string& text, const std::string& name) {
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
  spec::CustomAlgorithm out;
  out.source = name;
  out.name = algo.attribute("name").as_string();
  out.collective = algo.attribute("coll").as_string();
  out.ranks = algo.attribute("ngpus").as_int(0);
  out.chunks = algo.attribute("nchunksperloop").as_int(0);
  out.channels = std::max(1, algo.attribute("nchannels").as_int(1));
  const bool inplace = algo.attribute("inplace").as_int(0) == 1;
  if (out.ranks < 1) return Status::Corruption(at(algo) + ": <algo> needs ngpus >= 1");
  if (out.chunks < 1) return Status::Corruption(at(algo) + ": <algo> needs nchunksperloop >= 1");
  // Numbers in the file size what is allocated here and in the planner: ngpus must be matched
  // by <gpu> elements, and chunks and channels stay within what a plan can hold.
  const size_t gpus = static_cast<size_t>(
      std::distance(algo.children("gpu").begin(), algo.children("gpu").end()));
  if (static_cast<size_t>(out.ranks) > gpus) {
    return Status::Corruption(at(algo) + ": ngpus is " + std::to_string(out.ranks) +
                              " but the file has " + std::to_string(gpus) +
                              " <gpu> elements (give one <gpu> per rank)");
  }
  if (out.chunks > kMaxMscclChunks) {
    return Status::Corruption(at(algo) + ": nchunksperloop is " + std::to_string(out.chunks) +
                              ", more than genie plans (" + std::to_string(kMaxMscclChunks) +
                              "); use fewer, larger chunks");
  }
  if (out.channels > kMaxMscclChannels) {
    return Status::Corruption(at(algo) + ": nchannels is " + std::to_string(out.channels) +
                              ", more than genie opens per peer (" +
                              std::to_string(kMaxMscclChannels) + ")");
  }
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
    std::vector<spec::CustomStep>& mine = out.steps[static_cast<size_t>(id)];
    for (const pugi::xml_node& tb : tbs) {
      const int tb_id = tb.attribute("id").as_int(-1);
      const int send = tb.attribute("send").as_int(-1);
      const int recv = tb.attribute("recv").as_int(-1);
      const int chan = tb.attribute("chan").as_int(0);
      if (chan < 0 || chan >= kMaxMscclChannels) {
        return Status::Corruption(at(tb) + ": threadblock " + std::to_string(tb_id) +
                                  " of gpu " + std::to_string(id) + " has chan " +
                                  std::to_string(chan) + " (channels are 0 to " +
                                  std::to_string(kMaxMscclChannels - 1) + ")");
      }
      // A channel past nchannels still gets its own connection.
      out.channels = std::max(out.channels, chan + 1);
      std::vector<uint32_t> prev;  // the tb's previous step (steps in a tb run in order)
      for (pugi::xml_node st : tb.children("step")) {
        const std::string where = at(st);
        const std::string type = st.attribute("type").as_string();
        const int s = st.attribute("s").as_int(-1);
        spec::CustomStep cs;
        cs.channel = chan;
        cs.tb = tb_id;
        cs.tb_step = s;
        cs.where = where;
        bool needs_send = false, needs_recv = false;
        if (type == "s") {
          cs.kind = spec::CustomStepKind::kSend;
          needs_send = true;
        } else if (type == "r") {
          cs.kind = spec::CustomStepKind::kRecv;
          needs_recv = true;
        } else if (type == "rrc") {
          cs.kind = spec::CustomStepKind::kRecvReduce;
          needs_recv = true;
        } else if (type == "rcs") {
          cs.kind = spec::CustomStepKind::kRecvCopySend;
          needs_send = needs_recv = true;
        } else if (type == "rrs" || type == "rrcs") {
          cs.kind = spec::CustomStepKind::kRecvReduceSend;
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
        const bool reads = cs.kind == spec::CustomStepKind::kSend;
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
        // In 64 bits: offsets and counts near INT_MAX must not wrap.
        if (off < 0 || cnt < 1 || int64_t{off} + cnt > out.chunks) {
          return Status::Corruption(where + ": chunks [" + std::to_string(off) + ", " +
                                    std::to_string(int64_t{off} + cnt) + ") fall outside the " +
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

Result<spec::CustomAlgorithm> ReadMscclXml(const std::string& path) {
  GENIE_RETURN_IF_ERROR(CheckInputFile(path, "MSCCL-IR file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound("cannot open MSCCL-IR file '" + path + "': " + std::strerror(errno) +
                            " (check the path)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError("error reading MSCCL-IR file '" + path + "'");
  return ParseMscclXml(text.str(), path);
}

}  // namespace genie::trace
