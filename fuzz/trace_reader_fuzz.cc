// libFuzzer target for the Chakra trace reader: the input is a whole .et file (plain or gzip).
// It is opened as a rank's trace under every --ctrl-deps mode, walked to the end, and every
// node decoded. Any input must give a Status, never a crash, hang or sanitizer report.
//   build/<dir>/fuzz/trace_reader_fuzz -max_total_time=600 <corpus dir>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "genie/workload/rank_graph.h"

namespace {

void Walk(const std::string& path, genie::workload::ReadOptions::CtrlDeps mode) {
  genie::workload::ReadOptions options;
  options.ctrl_deps = mode;
  if (mode == genie::workload::ReadOptions::CtrlDeps::kOff) options.default_comm_size = 4096;
  auto graph = genie::workload::RankGraph::Open(path, 3, options);
  if (!graph.ok()) return;
  auto& g = **graph;
  size_t steps = 0;
  while (!g.ready().empty()) {
    genie::NodeId id = *g.ready().begin();
    g.Take(id);
    (void)g.Load(id);
    g.Complete(id);
    ++steps;
  }
  // Acyclic by construction after Open: every node must have been reached.
  if (steps != g.size() || !g.AllComplete()) __builtin_trap();
  g.Reset();
  (void)g.warnings();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = memfd_create("trace_reader_fuzz", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  Walk(path, genie::workload::ReadOptions::CtrlDeps::kAuto);
  Walk(path, genie::workload::ReadOptions::CtrlDeps::kOn);
  Walk(path, genie::workload::ReadOptions::CtrlDeps::kOff);
  close(fd);
  return 0;
}
