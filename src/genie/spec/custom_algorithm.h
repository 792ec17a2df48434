// CustomAlgorithm: a collective algorithm brought from outside, as parsed data — per rank, the
// point-to-point steps over ranges counted in the algorithm's own chunks, with their channels
// and dependencies. Read from an MSCCL-IR XML file (trace/msccl_xml.h: what MSCCLang, TACCL and
// TACOS emit) or a Chakra custom-collective trace (trace/chakra_custom.h: per-rank SEND/RECV/COMP
// nodes, as ASTRA-sim lowers MSCCL-IR). The collective planner scales the chunks to a
// collective's bytes. It lives here, below both, so that the planner needs nothing of trace/.
// Loaded once by whoever reads the configuration and shared read-only
// (std::shared_ptr<const CustomAlgorithm>); a value type, any thread may read it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace genie::spec {

// What one step does; the planner maps these onto its own step kinds (the readers in trace/
// know nothing of collective/).
enum class CustomStepKind : uint8_t {
  kSend,            // send the range to send_peer
  kRecv,            // receive the range from recv_peer (overwrite)
  kRecvReduce,      // receive and reduce into the range
  kRecvCopySend,    // receive, then forward the received range to send_peer
  kRecvReduceSend,  // receive and reduce, then forward the result to send_peer
};

struct CustomStep {
  CustomStepKind kind = CustomStepKind::kSend;
  int send_peer = -1;          // rank index in the algorithm (= group index); -1 when no send
  int recv_peer = -1;          // -1 when no receive
  uint32_t chunk = 0;          // first chunk of the range
  uint32_t count = 1;          // chunks in the range
  int channel = 0;
  std::vector<uint32_t> deps;  // indices of earlier steps of the same rank
  int tb = -1;                 // the MSCCL-IR threadblock and step it comes from
  int tb_step = -1;
  std::string where;           // "custom_allreduce.xml:12" or "custom_allreduce.3.et: node 7 ..."
};

struct CustomAlgorithm {
  std::string source;      // the file (or Chakra prefix) it came from
  std::string name;
  std::string collective;  // MSCCL-IR `coll`, e.g. "allreduce"
  int ranks = 0;
  int chunks = 1;          // nchunksperloop: the buffer is cut into this many chunks
  int channels = 1;
  std::vector<std::vector<CustomStep>> steps;  // per rank
};

}  // namespace genie::spec
