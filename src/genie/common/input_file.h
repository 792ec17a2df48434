// The one check every reader of a user's file makes before opening it: the path names a
// readable regular file (through links). A folder would read as empty, a FIFO would block the
// open until some writer came, a dangling link or a device is no input; each is refused with
// the path, what it is and what the reader expected (`what`: "network config", "model file").
// ReadInputFile checks, then reads the whole file. Pure apart from the file system; any thread.
#pragma once

#include <string>

#include "genie/common/status.h"

namespace genie {

// Ok, NotFound (missing, dangling link) or InvalidArgument (folder, FIFO, socket, device,
// unreadable), the message "PATH: the WHAT is a folder; give the file itself".
Status CheckInputFile(const std::string& path, const std::string& what);

// The whole file after CheckInputFile, OS errors worded with the path and `what`.
Result<std::string> ReadInputFile(const std::string& path, const std::string& what);

}  // namespace genie
