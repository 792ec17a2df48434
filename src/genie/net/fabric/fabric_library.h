// libfabric, loaded when a fabric transport is first opened rather than when genie starts.
// Debian's libfabric1 links the PSM providers' libraries, and libinfinipath's load-time
// constructor polls for its hardware (~0.3 s in every process, measured); genie processes that
// never use --transport fabric (most of them: the launcher, gen, inspect, simulate, TCP ranks)
// must not pay that. The handful of exported entry points genie calls are resolved here; the
// rest of libfabric's API is inline calls through the objects' ops tables and needs no symbol.
// Threading: any; loading happens once (std::call_once).
#pragma once

#include <rdma/fabric.h>

#include "genie/common/status.h"

namespace genie::net::fabric_library {

// Loads libfabric.so.1 once; an error names the library, dlerror's reason and the package.
Status Load();

// libfabric's exported functions, through the loaded library. Call after Load() succeeded
// (fi_strerror also works before: it says the library is not loaded).
int GetInfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info);
void FreeInfo(fi_info* info);
fi_info* DupInfo(const fi_info* info);
inline fi_info* AllocInfo() { return DupInfo(nullptr); }
int Fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
const char* StrError(int errnum);

}  // namespace genie::net::fabric_library
