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
  # Executables not position-independent: an instrumented genie carries ~2.8 million relative
  # relocations (sanitizer metadata), which the dynamic loader took ~0.35 s of CPU to apply at
  # every start — and e2e tests start genie thousands of times, eight ranks at once.
  add_link_options($<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-no-pie>)
  if(GENIE_SANITIZE MATCHES "undefined")
    # UBSan's first report ends the process, as ASan's does: a test (or a rank it started)
    # fails on undefined behaviour instead of printing a line nobody reads.
    add_compile_options(-fno-sanitize-recover=undefined)
    add_link_options(-fno-sanitize-recover=undefined)
  endif()
endif()

# genie_library(NAME SOURCES ... DEPS ...): a module library with genie's warnings, compiled
# in unity batches (cmake/GenieUnity.cmake).
function(genie_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  genie_warnings(${name})
  genie_unity(${name})
endfunction()

# Sets `out` to every genie module library, top layer first (for tests/, bench/, fuzz/, tools/,
# which are added after all modules).
function(genie_all_libs out)
  set(libs "")
  foreach(module ${GENIE_LAYERS})
    list(PREPEND libs genie_${module})
  endforeach()
  list(APPEND libs genie_proto)
  set(${out} ${libs} PARENT_SCOPE)
endfunction()
