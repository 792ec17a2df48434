#include "genie/workload/replicate.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "genie/trace/attributes.h"
#include "genie/trace/comm_groups.h"
#include "genie/trace/et_reader.h"
#include "genie/trace/et_writer.h"
#include "genie/trace/workload_files.h"

namespace genie::workload {
namespace {

using VC = trace::Attr::ValueCase;

// Adds `shift` to an integer attribute, keeping its type.
Status Shift(trace::Attr* a, int64_t shift, const std::string& where) {
  switch (a->value_case()) {
    case VC::kInt32Val:
      a->set_int32_val(static_cast<int32_t>(a->int32_val() + shift));
      break;
    case VC::kInt64Val:
      a->set_int64_val(a->int64_val() + shift);
      break;
    case VC::kUint32Val:
      a->set_uint32_val(static_cast<uint32_t>(a->uint32_val() + shift));
      break;
    case VC::kUint64Val:
      a->set_uint64_val(static_cast<uint64_t>(a->uint64_val() + shift));
      break;
    case VC::kSint32Val:
      a->set_sint32_val(static_cast<int32_t>(a->sint32_val() + shift));
      break;
    case VC::kSint64Val:
      a->set_sint64_val(a->sint64_val() + shift);
      break;
    default:
      return Status::InvalidArgument(where + ": attribute " + a->name() + " is a " +
                                     trace::AttrTypeName(*a) + ", not an integer rank");
  }
  return Status::Ok();
}

}  // namespace

Result<int> Replicate(const ReplicateOptions& o) {
  if (o.copies < 1) return Status::InvalidArgument("--copies must be 1 or more");
  if (o.output.empty()) return Status::InvalidArgument("--output PREFIX is required");
  GENIE_ASSIGN_OR_RETURN(trace::WorkloadFiles files, trace::FindWorkload(o.input, o.comm_group));
  const int n = files.world_size();
  if (static_cast<int64_t>(n) * o.copies > (1 << 24)) {
    return Status::InvalidArgument(std::to_string(o.copies) + " copies of " + std::to_string(n) +
                                   " ranks are more than 2^24 ranks");
  }
  trace::CommGroups groups;
  if (!files.comm_group_path.empty()) {
    GENIE_ASSIGN_OR_RETURN(groups, trace::CommGroups::Load(files.comm_group_path));
  }
  int64_t max_id = 0;
  for (const auto& [id, members] : groups.all()) max_id = std::max(max_id, id);
  const int64_t stride = max_id + 2;
  const int64_t world_id = stride - 1;  // within a copy
  std::filesystem::path out_dir = std::filesystem::path(o.output).parent_path();
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec)
      return Status::IoError(out_dir.string() + ": cannot create output folder: " + ec.message());
  }

  ChakraProtoMsg::Node node;
  for (int r = 0; r < n; ++r) {
    const std::string& path = files.rank_paths[static_cast<size_t>(r)];
    GENIE_ASSIGN_OR_RETURN(auto reader, trace::EtReader::Open(path));
    for (int k = 0; k < o.copies; ++k) {
      const int64_t shift = int64_t{k} * n;
      const std::string out = o.output + "." + std::to_string(shift + r) + ".et";
      GENIE_ASSIGN_OR_RETURN(auto writer, trace::EtWriter::Create(out, reader->metadata(), o.gzip));
      reader->Rewind();
      uint64_t offset = 0;
      while (true) {
        GENIE_ASSIGN_OR_RETURN(bool have, reader->Next(&node, &offset));
        if (!have) break;
        const std::string where = path + " node " + std::to_string(node.id());
        if (node.type() == ChakraProtoMsg::METADATA_NODE) {
          return Status::Unsupported(
              where +
              ": METADATA nodes (PyTorch process groups) cannot be replicated yet; "
              "give the groups as a comm-group file (--comm-group) and drop the node");
        }
        const bool comm = node.type() == ChakraProtoMsg::COMM_COLL_NODE ||
                          node.type() == ChakraProtoMsg::COMM_SEND_NODE ||
                          node.type() == ChakraProtoMsg::COMM_RECV_NODE;
        bool has_pg = false;
        for (trace::Attr& a : *node.mutable_attr()) {
          if (a.name() == "comm_src" || a.name() == "comm_dst") {
            GENIE_RETURN_IF_ERROR(Shift(&a, shift, where));
          } else if (a.name() == "pg_name") {
            has_pg = true;
            GENIE_ASSIGN_OR_RETURN(auto text, trace::GetString(node, "pg_name"));
            GENIE_ASSIGN_OR_RETURN(int64_t g, trace::ParsePgName(text.value_or("")));
            const bool world = g == trace::kWorldGroupId || (g == 0 && groups.Find(0) == nullptr);
            if (!world && groups.Find(g) == nullptr) {
              return Status::InvalidArgument(
                  where + ": pg_name '" + text.value_or("") + "' is not a group of " +
                  (files.comm_group_path.empty() ? std::string("the workload (no comm-group file)")
                                                 : files.comm_group_path));
            }
            a.set_string_val(std::to_string(k * stride + (world ? world_id : g)));
          }
        }
        if (comm && !has_pg && node.type() == ChakraProtoMsg::COMM_COLL_NODE) {
          trace::AddString(&node, "pg_name", std::to_string(k * stride + world_id));
        }
        GENIE_RETURN_IF_ERROR(writer->Write(node));
      }
      GENIE_RETURN_IF_ERROR(writer->Close());
    }
  }

  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (int k = 0; k < o.copies; ++k) {
    const int64_t shift = int64_t{k} * n;
    for (const auto& [id, members] : groups.all()) {
      if (id < 0) continue;
      std::vector<int64_t> m;
      for (int r : members) m.push_back(shift + r);
      j[std::to_string(k * stride + id)] = m;
    }
    std::vector<int64_t> world;
    for (int r = 0; r < n; ++r) world.push_back(shift + r);
    j[std::to_string(k * stride + world_id)] = world;
  }
  const std::filesystem::path group_path = out_dir / trace::kCommGroupFileNames[0];
  std::ofstream f(group_path);
  f << j.dump() << "\n";
  f.close();
  if (!f) return Status::IoError(group_path.string() + ": cannot write the comm-group file");
  return n * o.copies;
}

}  // namespace genie::workload
