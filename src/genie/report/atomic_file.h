// Writing an output file (results JSON, Chrome trace, merged or stripped file) so that a reader
// sees the old file or the whole new one, never a 0-byte or half-written one: the text goes to
// a temporary file in the same folder (".NAME.tmp-PID-N"), is flushed to disk, and is renamed
// over NAME in one step. An interrupted write (kill, disk full) leaves NAME as it was; a killed
// process may leave its temporary file behind. Two writers of one NAME each rename a complete
// file, the last one wins. Any thread.
#pragma once

#include <string>
#include <string_view>

#include "genie/common/status.h"

namespace genie::report {

// Errors (IoError) name `path` and say what to check.
Status WriteFileAtomically(const std::string& path, std::string_view content);

}  // namespace genie::report
