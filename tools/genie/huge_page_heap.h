// The simulator's heap on transparent huge pages. At thousands of ranks every event reaches
// another rank's state (its runner, channels, flows), so a round over the ranks walks the heap
// page by page and pays a TLB miss at nearly every step; on 2 MiB pages the same heap is a few
// dozen TLB entries (docs/notes/2026-12-01-simulation-optimisation-passes.md, "Part 10").
// glibc (2.35 on) puts malloc's heap on them when the tunable glibc.malloc.hugetlb=1 is set,
// which it reads only at start: so `genie simulate` executes itself again once, with the
// tunable added to GLIBC_TUNABLES.
// Nothing is done when the kernel's THP mode is not `madvise` (`always` already gives the heap
// huge pages; `never` refuses them), when GLIBC_TUNABLES already names the tunable (the user's
// choice, or this process after the re-execution), when glibc is older, or when
// GENIE_HUGE_PAGES=0. Main thread, before any other thread starts.
#pragma once

#include <string>
#include <vector>

namespace genie::cli {

// Re-executes this process (same pid, same `argv`) with malloc on huge pages when that helps;
// returns only when it does not (or the exec failed), and then the process goes on as it was.
void ReexecWithHugePageHeap(const std::vector<std::string>& argv);

// True when this process's malloc was asked for huge pages (GLIBC_TUNABLES sets the tunable to
// 1 or 2).
bool HugePageHeapRequested();

}  // namespace genie::cli
