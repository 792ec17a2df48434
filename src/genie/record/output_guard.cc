#include "genie/record/output_guard.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "genie/record/run_folder.h"

namespace genie::record {
namespace {

namespace fs = std::filesystem;

// What a path names: the file itself when it exists (device, inode, kind), and the path it
// resolves to either way (the folder's realpath plus the name).
struct Resolved {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  mode_t mode = 0;
  std::string path;
  std::string folder;
};

std::string RealPath(const std::string& p) {
  char buf[PATH_MAX];
  if (::realpath(p.c_str(), buf) != nullptr) return buf;
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(p, ec), ec).lexically_normal().string();
}

Resolved Resolve(const std::string& p) {
  Resolved r;
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    r.exists = true;
    r.dev = st.st_dev;
    r.ino = st.st_ino;
    r.mode = st.st_mode;
    r.path = RealPath(p);
  } else {
    const fs::path path(p);
    const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
    r.path = (fs::path(RealPath(folder.string())) / path.filename()).lexically_normal().string();
  }
  r.folder = fs::path(r.path).parent_path().string();
  return r;
}

bool Same(const Resolved& a, const Resolved& b) {
  if (a.exists && b.exists) return a.dev == b.dev && a.ino == b.ino;
  return a.path == b.path;
}

bool SameFolder(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) {
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  }
  return RealPath(a) == RealPath(b);
}

std::string Lower(const char* reason) {
  std::string s = reason;
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

bool IsStreamName(const std::string& name) {
  if (name == "results.json" || name == "simulate.jsonl") return true;
  if (name.rfind("rank-", 0) != 0 || name.size() <= 11) return false;
  if (name.compare(name.size() - 6, 6, ".jsonl") != 0) return false;
  for (size_t i = 5; i < name.size() - 6; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
  }
  return true;
}

}  // namespace

bool IsResultsFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (IsStreamName(fs::path(path).filename().string())) return true;
  std::ifstream in(path, std::ios::binary);
  char head[128] = {};
  in.read(head, sizeof(head) - 1);
  const std::string text(head, static_cast<size_t>(in.gcount()));
  return text.rfind("{\"record\":\"header\"", 0) == 0 &&
         text.find("genie-record") != std::string::npos;
}

Status CheckOutputs(const OutputPlan& plan) {
  std::vector<std::pair<const std::string*, Resolved>> inputs;
  for (const auto& in : plan.inputs) {
    if (!in.empty()) inputs.emplace_back(&in, Resolve(in));
  }
  struct Out {
    const std::string* name;
    bool results;
    Resolved at;
  };
  std::vector<Out> outs;
  for (const auto& o : plan.results) {
    if (!o.empty()) outs.push_back({&o, true, Resolve(o)});
  }
  for (const auto& o : plan.outputs) {
    if (!o.empty()) outs.push_back({&o, false, Resolve(o)});
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    const Out& out = outs[i];
    const std::string& name = *out.name;
    for (const auto& [in, at] : inputs) {
      if (Same(out.at, at)) {
        return Status::InvalidArgument(fmt::format(
            "refusing to write {}: it is one of the inputs ({}) and would be overwritten; "
            "name another output file",
            name, *in));
      }
    }
    for (size_t k = 0; k < i; ++k) {
      if (Same(out.at, outs[k].at)) {
        return Status::InvalidArgument(fmt::format(
            "refusing to write {}: it is {}, which this command writes too{}; name another "
            "output file",
            name, *outs[k].name, outs[k].results ? " (a results file or rank stream of the run)" : ""));
      }
    }
    if (out.at.exists && !S_ISREG(out.at.mode)) {
      return Status::InvalidArgument(fmt::format(
          "refusing to write {}: it is {}, not a file; name a file to write", name,
          S_ISDIR(out.at.mode) ? "a folder" : "a FIFO, socket or device"));
    }
    if (!out.results && IsResultsFile(name)) {
      return Status::InvalidArgument(fmt::format(
          "refusing to write {}: it is a genie results file or rank stream and would be "
          "replaced; name another output file",
          name));
    }
    bool own = false;
    for (const auto& f : plan.own_folders) own = own || SameFolder(f, out.at.folder);
    if (!own) {
      const std::string holder = FolderHolder(out.at.folder);
      if (!holder.empty()) {
        return Status::InvalidArgument(fmt::format(
            "refusing to write {}: its folder {} is in use by another genie job or "
            "simulation that is still running ({}); wait for it to finish, or write elsewhere",
            name, out.at.folder, holder));
      }
    }
  }
  return Status::Ok();
}

Status MakeOutputFolder(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("no output folder given");
  fs::path built;
  for (const fs::path& part : fs::path(dir)) {
    built /= part;
    if (part.empty()) continue;
    struct stat st {};
    if (::stat(built.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        return Status::InvalidArgument(fmt::format(
            "cannot use output folder {}: {} is not a folder; name another output folder", dir,
            built.string()));
      }
      continue;
    }
    if (::mkdir(built.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::IoError(fmt::format(
          "cannot create output folder {}: {}: {} (check where the output goes and that it is "
          "writable)",
          dir, Lower(std::strerror(errno)), built.string()));
    }
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return Status::IoError(fmt::format(
        "cannot write into output folder {}: {}: {} (check where the output goes and that it "
        "is writable)",
        dir, Lower(std::strerror(errno)), dir));
  }
  return Status::Ok();
}

}  // namespace genie::record
