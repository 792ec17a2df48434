#include "genie/env/env.h"

#include <sys/wait.h>

#include <filesystem>

#include <fmt/format.h>

#include "genie/env/real_env.h"

namespace genie::env {

Env* Env::Default() {
  static Env* const kEnv = new RealEnv();  // never destroyed: used until the process exits
  return kEnv;
}

Status Env::WriteFile(const std::string& path, std::string_view data) {
  GENIE_ASSIGN_OR_RETURN(auto file, NewWritableFile(path));
  Status st = file->Append(data);
  Status closed = file->Close();
  return st.ok() ? closed : st;
}

Status Env::WriteFileAtomically(const std::string& path, std::string_view data) {
  const std::filesystem::path p(path);
  const std::string tmp =
      (p.parent_path() / fmt::format(".{}.{}.tmp", p.filename().string(), ProcessId())).string();
  Status st = WriteFile(tmp, data);
  if (st.ok()) st = RenameFile(tmp, path);
  if (!st.ok()) (void)RemoveFile(tmp);
  return st;
}

int ExitedWith(int code) { return W_EXITCODE(code & 0xff, 0); }
int KilledBy(int signal) { return W_EXITCODE(0, signal & 0x7f); }

}  // namespace genie::env
