# Warnings for genie's own targets (not for generated protobuf code), sanitizers for all.
function(genie_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough)
  if(GENIE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(GENIE_SANITIZE)
  add_compile_options(-fsanitize=${GENIE_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${GENIE_SANITIZE})
endif()

# genie_library(NAME SOURCES ... DEPS ...): a module library with genie's warnings.
function(genie_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  genie_warnings(${name})
endfunction()

# Sets `out` to every genie module library defined so far (for tests/, bench/, fuzz/, tools/,
# which are added after all modules).
function(genie_all_libs out)
  set(libs "")
  foreach(lib genie_report genie_record genie_testbed genie_launch genie_runtime genie_net
              genie_loop genie_sim genie_config genie_collective genie_compute genie_workload
              genie_trace genie_proto genie_common)
    if(TARGET ${lib})
      list(APPEND libs ${lib})
    endif()
  endforeach()
  set(${out} ${libs} PARENT_SCOPE)
endfunction()
