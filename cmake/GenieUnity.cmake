# Unity builds for genie's own libraries and the CLI: each target's sources are compiled as a
# few generated files that #include up to GENIE_UNITY_BATCH of them, so the heavy headers most
# files share (nlohmann/json, fmt, spdlog, the STL; CLI11 in every tools/genie/cmd_*.cc, whose
# header alone costs ~7 s of CPU a file) are parsed, and their templates instantiated and
# optimised, once a batch instead of once a file. Measured on the genie binary from scratch
# (README, "The two commands"). Tests are not unity-built (one edit would rebuild a batch).
#
# What it asks of the code: two files of one library may not define the same name at file
# scope (static, anonymous namespace), or a batch fails to compile — rename one, or list the
# file in GENIE_UNITY_ALONE below. Files with their own compile definitions (net's
# pmix_client.cc) are compiled alone by CMake itself.
# -DGENIE_UNITY=OFF (or the dev preset) compiles file by file, the quicker loop when editing
# one file of a big library.
option(GENIE_UNITY "Compile genie's libraries and CLI as unity batches" ON)
set(GENIE_UNITY_BATCH 8 CACHE STRING "Sources per unity batch (GENIE_UNITY)")
# Sources (relative to the top of the checkout) compiled alone, none today. Every file compiled
# alone parses and instantiates the heavy headers once more (8-16 s of CPU for a json user):
# rename a clashing helper rather than add to this list.
set(GENIE_UNITY_ALONE "")

# genie_unity(TARGET): a unity build for TARGET when GENIE_UNITY is on.
function(genie_unity target)
  if(NOT GENIE_UNITY)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE BATCH
                                             UNITY_BUILD_BATCH_SIZE ${GENIE_UNITY_BATCH})
  get_target_property(dir ${target} SOURCE_DIR)
  foreach(rel ${GENIE_UNITY_ALONE})
    set_source_files_properties(${CMAKE_SOURCE_DIR}/${rel} DIRECTORY ${dir}
                                PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endforeach()
endfunction()
