# Code off the measured path is compiled at -O1 in optimised builds: the CLI (flag parsing), the
# drivers (they call the executor, backends and simulator, which time and carry every op), the
# results and reports written after a run, and the launcher. They are a third of what the genie
# binary compiles and the optimiser is most of their cost: at -O1 they compile 20-28 % faster
# (paired compiles of one batch: the CLI 23.2 -> 18.7 s of CPU, report 26.6 -> 21.4 s, driver
# 33.4 -> 24.1 s), which brings `make run`'s build closer to its budget (issue 45). What times
# and moves the data (net/, loop/, runtime/, the backends, sim/, record/, trace/, collective/,
# compute/, config/) keeps -O2, as do testbed/ (its delay helper handles every packet; -O1
# saved nothing measurable there) and synth/ (which writes big traces).
# -O1 changes no result: neither level reassociates or contracts floating point (-std=c++20,
# x86-64 without FMA); `genie simulate`'s results.json were compared identical.
# -DGENIE_COLD_O1=OFF compiles everything at the build type's level.
option(GENIE_COLD_O1 "Compile genie's code off the measured path at -O1 in optimised builds" ON)

# genie_cold_code(TARGET): TARGET is off the measured path (see above).
function(genie_cold_code target)
  if(GENIE_COLD_O1)
    target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O1>)
  endif()
endfunction()
