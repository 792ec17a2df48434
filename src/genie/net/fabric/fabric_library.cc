#include "genie/net/fabric/fabric_library.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace genie::net::fabric_library {
namespace {

struct Api {
  decltype(&fi_getinfo) getinfo = nullptr;
  decltype(&fi_freeinfo) freeinfo = nullptr;
  decltype(&fi_dupinfo) dupinfo = nullptr;
  decltype(&fi_fabric) fabric = nullptr;
  decltype(&fi_strerror) strerror = nullptr;
};

Api api;
Status load_status = Status::Ok();
std::once_flag once;

template <typename F>
bool Resolve(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

void LoadOnce() {
  // RTLD_LOCAL: libfabric's providers are its own business; RTLD_NOW: a missing symbol shows
  // here, not in the middle of a run.
  void* lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    load_status = Status::Unavailable(
        std::string("--transport fabric: cannot load libfabric.so.1 (") +
        (why != nullptr ? why : "unknown reason") +
        "); install Debian's libfabric1 (scripts/install-deps.sh does) or use --transport tcp");
    return;
  }
  Api a;
  const bool all = Resolve(lib, "fi_getinfo", &a.getinfo) &&
                   Resolve(lib, "fi_freeinfo", &a.freeinfo) &&
                   Resolve(lib, "fi_dupinfo", &a.dupinfo) && Resolve(lib, "fi_fabric", &a.fabric) &&
                   Resolve(lib, "fi_strerror", &a.strerror);
  if (!all) {
    load_status = Status::Unavailable(
        "--transport fabric: libfabric.so.1 lacks an entry point genie needs (fi_getinfo, "
        "fi_freeinfo, fi_dupinfo, fi_fabric, fi_strerror): is it libfabric 1.x?");
    return;
  }
  api = a;
}

}  // namespace

Status Load() {
  std::call_once(once, LoadOnce);
  return load_status;
}

int GetInfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info) {
  return api.getinfo(version, node, service, flags, hints, info);
}
void FreeInfo(fi_info* info) {
  if (info != nullptr) api.freeinfo(info);
}
fi_info* DupInfo(const fi_info* info) { return api.dupinfo(info); }
int Fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) {
  return api.fabric(attr, fabric, context);
}
const char* StrError(int errnum) {
  return api.strerror != nullptr ? api.strerror(errnum) : "libfabric is not loaded";
}

}  // namespace genie::net::fabric_library
