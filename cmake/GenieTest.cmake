# genie_test(NAME SOURCES ... DEPS ... LABELS unit|e2e|slow [TIMEOUT s] [SERIAL]
#            [SERIAL_FILTER gtest-filter] [SERIAL_PROPERTIES prop value ...])
# Builds a GoogleTest binary, linked with the test-support library (tests/support/), and
# registers each test case with ctest under the given labels, so CI can budget time with
# `ctest -L unit` / `-LE slow`. SERIAL: its tests run alone (they compare measured times with
# a model, which the other tests' load on two cores would skew). SERIAL_FILTER: only the test
# cases it matches (e.g. "Doctor.*:DoctorCalibrate.*") run alone; the binary's other cases run
# beside other tests (a serial case leaves a core idle). SERIAL_PROPERTIES: more ctest
# properties of the serial cases (e.g. the fixture of a testbed they share, tests/CMakeLists.txt).
function(genie_test name)
  if(NOT GENIE_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "SERIAL" "TIMEOUT;SERIAL_FILTER" "SOURCES;DEPS;LABELS;SERIAL_PROPERTIES"
                        ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} genie_test_support GTest::gtest GTest::gmock
                        GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    GENIE_DATA_DIR="${GENIE_DATA_DIR}"
    GENIE_BINARY_DIR="${CMAKE_BINARY_DIR}"
    GENIE_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  genie_warnings(${name})
  # Test files are half of what make test compiles; at -O1 (GoogleTest's macros expand to much
  # code) they build 10-22 % faster. The code under test keeps its libraries' -O2.
  target_compile_options(${name} PRIVATE $<$<CONFIG:RelWithDebInfo>:-O1>)
  include(GoogleTest)
  if(ARG_SERIAL_FILTER)
    gtest_discover_tests(${name} TEST_FILTER "${ARG_SERIAL_FILTER}" TEST_LIST ${name}_SERIAL
      PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} RUN_SERIAL TRUE
                 ${ARG_SERIAL_PROPERTIES}
      DISCOVERY_TIMEOUT 60)
    gtest_discover_tests(${name} TEST_FILTER "-${ARG_SERIAL_FILTER}"
      PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} DISCOVERY_TIMEOUT 60)
  else()
    set(serial_properties "")
    if(ARG_SERIAL)
      set(serial_properties ${ARG_SERIAL_PROPERTIES})
    endif()
    gtest_discover_tests(${name}
      PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} RUN_SERIAL ${ARG_SERIAL}
                 ${serial_properties}
      DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
