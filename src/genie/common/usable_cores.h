// The CPUs this process may run on (sched_getaffinity; a container's cpuset, taskset), at
// least 1: what ranks sharing this machine share. Any thread.
#pragma once

namespace genie {

int UsableCores();

}  // namespace genie
