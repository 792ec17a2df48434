// Custom collective algorithms brought from outside: an MSCCL-IR XML file (what MSCCLang,
// TACCL and TACOS emit) or a Chakra custom-collective trace (per-rank SEND/RECV/COMP nodes, as
// ASTRA-sim lowers MSCCL-IR). Both load into one CustomAlgorithm: per rank, steps over ranges
// counted in the algorithm's chunks, with their dependencies. Files are parsed once and cached
// (thread-safe); the planner scales chunks to the collective's bytes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "genie/collective/schedule.h"
#include "genie/common/status.h"

namespace genie::collective {

struct CustomStep {
  StepKind kind = StepKind::kSend;
  int send_peer = -1;            // rank index in the algorithm (= group index)
  int recv_peer = -1;
  uint32_t chunk = 0;            // first chunk of the range
  uint32_t count = 1;            // chunks in the range
  int channel = 0;
  std::vector<uint32_t> deps;    // indices into the rank's steps
  std::string where;             // "custom_allreduce.xml:12" or "custom_allreduce.3.et node 7"
};

struct CustomAlgorithm {
  std::string source;            // the file it came from
  std::string name;
  std::string collective;        // MSCCL-IR `coll`, e.g. "allreduce"
  int ranks = 0;
  int chunks = 1;                // nchunksperloop: the buffer is cut into this many chunks
  int channels = 1;
  std::vector<std::vector<CustomStep>> steps;  // per rank
};

// Parses MSCCL-IR XML text; `name` is used in errors ("file:line: reason").
Result<CustomAlgorithm> ParseMscclXml(const std::string& text, const std::string& name);
// Reads <prefix>.<rank>.et for ranks 0.. (Chakra custom collective).
Result<CustomAlgorithm> LoadChakraCustom(const std::string& prefix);
// Either, by the path's form (*.xml = MSCCL-IR, else a Chakra prefix or one of its .et files);
// cached by path.
Result<std::shared_ptr<const CustomAlgorithm>> LoadCustom(const std::string& path);

// A custom-algorithm path from a system.json: tried against the config's own folder first, then
// the working directory; the error names every place looked in.
Result<std::string> ResolveCustomPath(const std::string& path, const std::string& config_dir);

}  // namespace genie::collective
