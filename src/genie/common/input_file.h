// The one check every reader of a user's file makes before opening it: the path names a
// readable regular file (through links). A folder would read as empty, a FIFO would block the
// open until some writer came, a dangling link or a device is no input; each is refused with
// the path, what it is and what the reader expected (`what`: "network config", "model file").
// Pure apart from stat/access; any thread.
#pragma once

#include <string>

#include "genie/common/status.h"

namespace genie {

// Ok, NotFound (missing, dangling link) or InvalidArgument (folder, FIFO, socket, device,
// unreadable), the message "PATH: the WHAT is a folder; give the file itself".
Status CheckInputFile(const std::string& path, const std::string& what);

}  // namespace genie
