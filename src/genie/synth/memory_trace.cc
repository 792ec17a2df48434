#include "genie/synth/memory_trace.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "genie/synth/step.h"
#include "genie/trace/et_writer.h"

namespace genie::synth {
namespace {

class MemoryEtSink : public NodeSink {
 public:
  explicit MemoryEtSink(trace::EtWriter* writer) : writer_(writer) {}
  Status Write(const ChakraProtoMsg::Node& node) override { return writer_->Write(node); }

 private:
  trace::EtWriter* writer_;
};

}  // namespace

Result<MemoryTrace> MemoryTrace::Create(const std::string& name) {
  const int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    return Status::IoError("cannot create an in-memory file for " + name + ": " +
                           std::strerror(errno) +
                           (errno == EMFILE ? " (raise the open-files limit: ulimit -n)" : ""));
  }
  return MemoryTrace(fd);
}

Result<MemoryTrace> MemoryTrace::Rank(const Job& job, int rank) {
  GENIE_ASSIGN_OR_RETURN(MemoryTrace t, Create("synth rank " + std::to_string(rank)));
  GENIE_ASSIGN_OR_RETURN(auto writer, trace::EtWriter::Create(t.path(), trace::DefaultMetadata(),
                                                              /*gzip=*/false, 1));
  MemoryEtSink sink(writer.get());
  GENIE_ASSIGN_OR_RETURN(t.nodes_, EmitRank(job, rank, &sink));
  GENIE_RETURN_IF_ERROR(writer->Close());
  return t;
}

Result<MemoryTrace> MemoryTrace::CommGroups(const Job& job) {
  GENIE_ASSIGN_OR_RETURN(MemoryTrace t, Create("synth comm groups"));
  std::ofstream out(t.path());
  job.placement().WriteCommGroups(out);
  out.close();
  if (!out) return Status::IoError("cannot write the comm groups in memory");
  return t;
}

uint64_t MemoryTrace::bytes() const {
  struct stat st {};
  return fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

MemoryTrace::~MemoryTrace() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace genie::synth
