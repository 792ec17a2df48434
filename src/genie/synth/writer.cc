#include "genie/synth/writer.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "genie/synth/step.h"
#include "genie/trace/et_writer.h"

namespace genie::synth {
namespace {

class EtSink : public NodeSink {
 public:
  explicit EtSink(trace::EtWriter* writer) : writer_(writer) {}
  Status Write(const ChakraProtoMsg::Node& node) override { return writer_->Write(node); }

 private:
  trace::EtWriter* writer_;
};

Result<uint64_t> WriteRank(const Job& job, const WriteOptions& o, int rank) {
  std::string path = o.dir + "/" + o.prefix + "." + std::to_string(rank) + ".et";
  GENIE_ASSIGN_OR_RETURN(
      auto writer, trace::EtWriter::Create(path, trace::DefaultMetadata(), o.gzip, o.gzip_level));
  EtSink sink(writer.get());
  GENIE_ASSIGN_OR_RETURN(uint64_t nodes, EmitRank(job, rank, &sink));
  GENIE_RETURN_IF_ERROR(writer->Close());
  return nodes;
}

}  // namespace

Result<WriteReport> WriteWorkload(const Job& job, const WriteOptions& o) {
  if (o.dir.empty()) return Status::InvalidArgument("--output DIR is required");
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) return Status::IoError(o.dir + ": cannot create output folder: " + ec.message());

  WriteReport report;
  report.ranks = job.world();
  report.comm_group_path = o.dir + "/" + o.prefix + ".json";
  {
    std::ofstream groups(report.comm_group_path);
    job.placement().WriteCommGroups(groups);
    groups.close();
    if (!groups) return Status::IoError(report.comm_group_path + ": cannot write (disk full?)");
  }

  const int threads = std::max(1, std::min(o.jobs, job.world()));
  std::atomic<int> next{0};
  std::atomic<uint64_t> nodes{0};
  std::atomic<bool> failed{false};
  Status first_error = Status::Ok();
  std::mutex error_mu;
  auto work = [&] {
    for (int r = next++; r < job.world() && !failed; r = next++) {
      Result<uint64_t> n = WriteRank(job, o, r);
      if (!n.ok()) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!failed.exchange(true)) {
          first_error = Status::IoError("rank " + std::to_string(r) + ": " + n.status().message());
        }
        return;
      }
      nodes += *n;
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (failed) return first_error;
  report.nodes = nodes;
  return report;
}

}  // namespace genie::synth
