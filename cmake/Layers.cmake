# genie's layers, bottom first, and what each may include (docs/architecture.md draws them).
# A module may include itself, the modules named here and nothing else. The check
# (cmake/CheckLayers.cmake) runs as a build step that every module library waits for, so an
# include that breaks the rule stops `cmake --build` (and the `layers` test says the same); since
# each module's library links only what it may include, a new upward include usually fails to
# link as well.
#
# The rule the split holds: runtime/ (Executor, CollectiveRunner, plan memo, the Backend
# interface) sees neither the network nor the simulator; the backends that do are
# real_backend/ (net, loop) and sim_backend/ (sim). The planner (collective/) sees only the
# collective vocabulary in spec/, none of trace/.
set(GENIE_LAYERS common env spec trace config workload synth compute collective loop net sim record
                 runtime real_backend sim_backend launch testbed report driver)

set(GENIE_MAY_INCLUDE_common "")
set(GENIE_MAY_INCLUDE_env common)
set(GENIE_MAY_INCLUDE_spec "")
set(GENIE_MAY_INCLUDE_trace spec common)
set(GENIE_MAY_INCLUDE_config common)
set(GENIE_MAY_INCLUDE_workload trace spec common)
set(GENIE_MAY_INCLUDE_synth workload trace spec common)
set(GENIE_MAY_INCLUDE_compute workload trace spec common)
set(GENIE_MAY_INCLUDE_collective spec common)
set(GENIE_MAY_INCLUDE_loop env common)
set(GENIE_MAY_INCLUDE_net env loop common)
set(GENIE_MAY_INCLUDE_sim config common)
set(GENIE_MAY_INCLUDE_record env workload trace spec common)
# compute: the Executor owns the rank's ComputeModel (COMP node times). config: memory.json's
# model (MEM_LOAD / MEM_STORE costs) and run setup's reading of system.json / network.yml.
# trace: what workload's RankGraph is built on (comm groups), and the custom-algorithm files
# run setup loads. None of them reaches net/, loop/ or sim/.
set(GENIE_MAY_INCLUDE_runtime collective compute config record workload trace spec common)
# sim: the intra-host model runs on sim/'s topologies.
set(GENIE_MAY_INCLUDE_real_backend runtime env net loop sim config common)
set(GENIE_MAY_INCLUDE_sim_backend runtime collective sim config common)
set(GENIE_MAY_INCLUDE_launch env common)
set(GENIE_MAY_INCLUDE_testbed env config common)
set(GENIE_MAY_INCLUDE_report record workload trace spec config common)
set(GENIE_MAY_INCLUDE_driver report testbed launch real_backend sim_backend runtime env net loop synth
                             sim record collective compute workload config trace spec common)

# The check as a build step (target genie_layers, which every module library depends on: a
# broken rule fails `cmake --build`, whatever the target) and as the `layers` test (label unit).
# Every #include "genie/<m>/..." in src/genie/<x>/ must name <x> or a module x may include.
function(genie_layer_check)
  set(args "")
  foreach(m ${GENIE_LAYERS})
    string(REPLACE ";" "," allowed "${GENIE_MAY_INCLUDE_${m}}")
    list(APPEND args "-DMAY_INCLUDE_${m}=${allowed}")
  endforeach()
  string(REPLACE ";" "," layers "${GENIE_LAYERS}")
  set(check ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR}/src/genie "-DLAYERS=${layers}" ${args}
            -P ${CMAKE_SOURCE_DIR}/cmake/CheckLayers.cmake)
  # Re-run when any source or the rules change; the glob is redone at build time, so a new file
  # (or folder) is checked too.
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/genie/*.h
       ${CMAKE_SOURCE_DIR}/src/genie/*.cc)
  set(stamp ${CMAKE_BINARY_DIR}/layers.checked)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${check}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${sources} ${CMAKE_SOURCE_DIR}/cmake/Layers.cmake
            ${CMAKE_SOURCE_DIR}/cmake/CheckLayers.cmake
    COMMENT "Checking that every include points down (cmake/Layers.cmake)" VERBATIM)
  add_custom_target(genie_layers ALL DEPENDS ${stamp})
  foreach(m ${GENIE_LAYERS})
    add_dependencies(genie_${m} genie_layers)
  endforeach()
  if(GENIE_BUILD_TESTS)
    add_test(NAME layers COMMAND ${check})
    set_tests_properties(layers PROPERTIES LABELS unit)
  endif()
endfunction()
