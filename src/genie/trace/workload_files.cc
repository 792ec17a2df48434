#include "genie/trace/workload_files.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <system_error>

#include "genie/common/input_file.h"

namespace genie::trace {
namespace fs = std::filesystem;
namespace {

// Splits "name.12.et" / "name.12.et.gz" into ("name", 12).
bool SplitRankFile(const std::string& file, std::string* prefix, int* rank) {
  std::string base = file;
  if (base.size() > 3 && base.compare(base.size() - 3, 3, ".gz") == 0) {
    base.resize(base.size() - 3);
  }
  if (base.size() < 4 || base.compare(base.size() - 3, 3, ".et") != 0) return false;
  base.resize(base.size() - 3);
  size_t dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == base.size()) return false;
  const char* first = base.data() + dot + 1;
  const char* last = base.data() + base.size();
  int r = 0;
  auto [p, ec] = std::from_chars(first, last, r);
  if (ec != std::errc() || p != last || r < 0) return false;
  *prefix = base.substr(0, dot);
  *rank = r;
  return true;
}

using Families = std::map<std::string, std::map<int, std::string>>;

Result<Families> ScanDir(const fs::path& dir) {
  Families families;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return Status::IoError(dir.string() + ": cannot list folder: " + ec.message());
  for (const auto& entry : it) {
    std::string prefix;
    int rank = 0;
    if (!SplitRankFile(entry.path().filename().string(), &prefix, &rank)) continue;
    // Named as a rank's trace, it must be one: a folder, FIFO or dangling link in its place
    // would otherwise leave the workload a rank short without a word.
    GENIE_RETURN_IF_ERROR(CheckInputFile(entry.path().string(), "rank's trace file"));
    families[prefix][rank] = entry.path().string();
  }
  return families;
}

}  // namespace

Result<WorkloadFiles> FindWorkload(const std::string& arg, const std::string& comm_group) {
  if (arg.empty()) {
    return Status::InvalidArgument("no workload given: name a folder of <prefix>.<rank>.et "
                                   "files or a <prefix> path");
  }
  std::error_code ec;
  fs::path p(arg);
  WorkloadFiles files;
  std::map<int, std::string> ranks;
  if (fs::is_directory(p, ec)) {
    GENIE_ASSIGN_OR_RETURN(Families families, ScanDir(p));
    if (families.empty()) {
      return Status::NotFound(arg + ": no <prefix>.<rank>.et trace files in this folder");
    }
    if (families.size() > 1) {
      std::string list;
      for (const auto& [name, r] : families) {
        list += "\n  " + (p / name).string() + "  (" + std::to_string(r.size()) + " ranks)";
      }
      return Status::InvalidArgument(arg + ": holds " + std::to_string(families.size()) +
                                     " trace families; name one by its prefix:" + list);
    }
    files.dir = p.string();
    files.name = families.begin()->first;
    ranks = families.begin()->second;
  } else {
    // A <prefix> path, or one rank's file of the family.
    std::string prefix = p.filename().string();
    int rank = 0;
    std::string stripped;
    if (SplitRankFile(prefix, &stripped, &rank)) prefix = stripped;
    fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec)) {
      return Status::NotFound(arg + ": neither a folder nor a <prefix> of trace files (folder " +
                              dir.string() + " does not exist)");
    }
    GENIE_ASSIGN_OR_RETURN(Families families, ScanDir(dir));
    auto it = families.find(prefix);
    if (it == families.end()) {
      std::string hint;
      for (const auto& [name, r] : families) hint += " " + name;
      return Status::NotFound(arg + ": no files " + (dir / prefix).string() + ".<rank>.et" +
                              (hint.empty() ? std::string() : " (families here:" + hint + ")"));
    }
    files.dir = dir.string();
    files.name = prefix;
    ranks = it->second;
  }
  // Ranks must be exactly 0..N-1.
  int expected = 0;
  std::string missing;
  int missing_count = 0;
  for (const auto& [rank, path] : ranks) {
    while (expected < rank) {
      if (++missing_count <= 10) missing += " " + std::to_string(expected);
      ++expected;
    }
    files.rank_paths.push_back(path);
    ++expected;
  }
  if (missing_count > 0) {
    return Status::InvalidArgument(
        (fs::path(files.dir) / files.name).string() + ": ranks must be 0.." +
        std::to_string(ranks.rbegin()->first) + " with no gap; missing " +
        std::to_string(missing_count) + " rank file(s):" + missing +
        (missing_count > 10 ? " ..." : ""));
  }
  if (!comm_group.empty()) {
    GENIE_RETURN_IF_ERROR(CheckInputFile(comm_group, "comm-group file"));
    files.comm_group_path = comm_group;
  } else {
    for (const char* name : kCommGroupFileNames) {
      fs::path candidate = fs::path(files.dir) / name;
      if (fs::is_regular_file(candidate, ec)) {
        files.comm_group_path = candidate.string();
        break;
      }
    }
  }
  return files;
}

}  // namespace genie::trace
