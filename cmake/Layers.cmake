# genie's layers, bottom first, and what each may include (docs/architecture.md draws them).
# A module may include itself, the modules named here and nothing else; the `layers` test
# (cmake/CheckLayers.cmake) fails the build's test run when an include breaks the rule, and
# since each module's library links only what it may include, a new upward include usually
# fails to link as well.
set(GENIE_LAYERS common env trace config workload synth compute collective loop net sim record runtime
                 launch testbed report driver)

set(GENIE_MAY_INCLUDE_common "")
set(GENIE_MAY_INCLUDE_env common)
set(GENIE_MAY_INCLUDE_trace common)
set(GENIE_MAY_INCLUDE_config common)
set(GENIE_MAY_INCLUDE_workload trace common)
set(GENIE_MAY_INCLUDE_synth workload trace common)
set(GENIE_MAY_INCLUDE_compute workload trace common)
set(GENIE_MAY_INCLUDE_collective workload trace common)
set(GENIE_MAY_INCLUDE_loop env common)
set(GENIE_MAY_INCLUDE_net env loop common)
set(GENIE_MAY_INCLUDE_sim config common)
set(GENIE_MAY_INCLUDE_record env workload trace common)
set(GENIE_MAY_INCLUDE_runtime env net loop sim record collective compute workload config trace common)
set(GENIE_MAY_INCLUDE_launch env common)
set(GENIE_MAY_INCLUDE_testbed env config common)
set(GENIE_MAY_INCLUDE_report record workload trace config common)
set(GENIE_MAY_INCLUDE_driver env report testbed launch runtime net loop sim record collective compute workload
                             config trace common)

# Registers the `layers` test (label unit): every #include "genie/<m>/..." in src/genie/<x>/ must
# name <x> or a module x may include.
function(genie_layer_check_test)
  set(args "")
  foreach(m ${GENIE_LAYERS})
    string(REPLACE ";" "," allowed "${GENIE_MAY_INCLUDE_${m}}")
    list(APPEND args "-DMAY_INCLUDE_${m}=${allowed}")
  endforeach()
  string(REPLACE ";" "," layers "${GENIE_LAYERS}")
  add_test(NAME layers
           COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR}/src/genie "-DLAYERS=${layers}" ${args}
                   -P ${CMAKE_SOURCE_DIR}/cmake/CheckLayers.cmake)
  set_tests_properties(layers PROPERTIES LABELS unit)
endfunction()
