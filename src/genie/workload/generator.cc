#include "genie/workload/generator.h"

#include <filesystem>

#include "genie/trace/attributes.h"
#include "genie/trace/et_writer.h"

namespace genie::workload {
namespace {

std::string RankPath(const std::string& output, int rank) {
  return output + "." + std::to_string(rank) + ".et";
}

Status CheckCommon(const std::string& output, int ranks) {
  if (output.empty()) return Status::InvalidArgument("--output PREFIX is required");
  if (ranks < 1 || ranks > 1 << 20) {
    return Status::InvalidArgument("--ranks " + std::to_string(ranks) + ": must be 1 or more");
  }
  std::filesystem::path dir = std::filesystem::path(output).parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::IoError(dir.string() + ": cannot create output folder: " + ec.message());
  }
  return Status::Ok();
}

}  // namespace

std::string SizeLabel(Bytes size) {
  if (size != 0 && size % (1ull << 30) == 0) return std::to_string(size >> 30) + "GB";
  if (size != 0 && size % (1ull << 20) == 0) return std::to_string(size >> 20) + "MB";
  if (size != 0 && size % (1ull << 10) == 0) return std::to_string(size >> 10) + "KB";
  return std::to_string(size) + "B";
}

Result<int> GenerateCollective(const GenCollectiveOptions& options) {
  GENIE_RETURN_IF_ERROR(CheckCommon(options.output, options.ranks));
  if (options.size > static_cast<Bytes>(INT64_MAX)) {
    return Status::InvalidArgument("--size is too large for Chakra's int64 comm_size");
  }
  ChakraProtoMsg::Node node;
  node.set_name(std::string(CollectiveTypeName(options.type)) + "_" +
                std::to_string(options.ranks) + "npus_" + SizeLabel(options.size));
  node.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  trace::AddBool(&node, "is_cpu_op", false);
  trace::AddInt64(&node, "comm_type", static_cast<int64_t>(options.type));
  trace::AddInt64(&node, "comm_size", static_cast<int64_t>(options.size));
  for (int r = 0; r < options.ranks; ++r) {
    GENIE_ASSIGN_OR_RETURN(auto writer,
                           trace::EtWriter::Create(RankPath(options.output, r),
                                                   trace::DefaultMetadata(), options.gzip));
    // The node id is the rank, as in ASTRA-sim's shipped microbenchmarks.
    node.set_id(static_cast<uint64_t>(r));
    GENIE_RETURN_IF_ERROR(writer->Write(node));
    GENIE_RETURN_IF_ERROR(writer->Close());
  }
  return options.ranks;
}

Result<int> GenerateComputeChain(const GenComputeChainOptions& options) {
  GENIE_RETURN_IF_ERROR(CheckCommon(options.output, options.ranks));
  if (options.duration < 0 || options.duration % kNsPerUs != 0) {
    return Status::InvalidArgument("--duration must be a whole number of microseconds "
                                   "(Chakra stores duration_micros)");
  }
  if (options.count == 0) return Status::InvalidArgument("--count must be at least 1");
  ChakraProtoMsg::Node node;
  for (int r = 0; r < options.ranks; ++r) {
    GENIE_ASSIGN_OR_RETURN(auto writer,
                           trace::EtWriter::Create(RankPath(options.output, r),
                                                   trace::DefaultMetadata(), options.gzip));
    for (uint64_t i = 0; i < options.count; ++i) {
      node.Clear();
      node.set_id(i);
      node.set_name("compute_" + std::to_string(i));
      node.set_type(ChakraProtoMsg::COMP_NODE);
      if (i > 0) node.add_data_deps(i - 1);
      node.set_duration_micros(static_cast<uint64_t>(options.duration / kNsPerUs));
      trace::AddBool(&node, "is_cpu_op", false);
      if (options.num_ops > 0) trace::AddInt64(&node, "num_ops", static_cast<int64_t>(options.num_ops));
      if (options.tensor_size > 0) trace::AddUint64(&node, "tensor_size", options.tensor_size);
      GENIE_RETURN_IF_ERROR(writer->Write(node));
    }
    GENIE_RETURN_IF_ERROR(writer->Close());
  }
  return options.ranks;
}

Result<int> GenerateRemoteMemory(const GenRemoteMemoryOptions& options) {
  GENIE_RETURN_IF_ERROR(CheckCommon(options.output, options.ranks));
  if (options.count == 0) return Status::InvalidArgument("--count must be at least 1");
  ChakraProtoMsg::Node node;
  for (int r = 0; r < options.ranks; ++r) {
    GENIE_ASSIGN_OR_RETURN(
        auto writer, trace::EtWriter::Create(RankPath(options.output, r), trace::DefaultMetadata(),
                                             options.gzip));
    for (uint64_t i = 0; i < options.count; ++i) {
      node.Clear();
      node.set_id(i);
      node.set_name(std::string(options.store ? "MEM_STORE_" : "MEM_LOAD_") + std::to_string(i));
      node.set_type(options.store ? ChakraProtoMsg::MEM_STORE_NODE : ChakraProtoMsg::MEM_LOAD_NODE);
      trace::AddBool(&node, "is_cpu_op", false);
      trace::AddUint64(&node, "tensor_size", options.size);
      GENIE_RETURN_IF_ERROR(writer->Write(node));
    }
    GENIE_RETURN_IF_ERROR(writer->Close());
  }
  return options.ranks;
}

}  // namespace genie::workload
