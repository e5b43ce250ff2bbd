# longhaul_add_test(NAME name SOURCES a.cc b.cc LIBS lib1 lib2 [LABELS l] [TIMEOUT s]
#                   [RESOURCE_LOCK r] [COST c])
# One GoogleTest binary per call, registered with ctest test by test. Label "unit" for a test
# that needs no other binary and no network: the target `unit_tests` builds those, and the
# sanitizer build (deploy/sanitize.sh) runs them with `ctest -L unit`.
include(GoogleTest)
function(longhaul_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT;RESOURCE_LOCK;COST" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest_main longhaul_testing)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set(props TIMEOUT ${T_TIMEOUT})
  if(T_LABELS)
    list(APPEND props LABELS "${T_LABELS}")
  endif()
  if(T_RESOURCE_LOCK)  # tests that share something outside (a Slurm node) run one at a time
    list(APPEND props RESOURCE_LOCK ${T_RESOURCE_LOCK})
    # ... and such a chain starts first, so that it runs beside the rest of the suite instead
    # of alone after it (ctest -j starts the costliest tests first; a fresh clone has no timings
    # of its own yet).
    if(NOT T_COST)
      set(T_COST 1000)
    endif()
  endif()
  if(T_COST)
    list(APPEND props COST ${T_COST})
  endif()
  if("unit" IN_LIST T_LABELS)
    set_property(GLOBAL APPEND PROPERTY LONGHAUL_UNIT_TARGETS ${T_NAME})
  endif()
  gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES ${props})
endfunction()

# Adds a subdirectory of the build. A folder the build names must be there: a missing one
# (a partial checkout, a part renamed without its CMakeLists.txt) stops the configure step and
# says which, instead of building a longhaul without it.
macro(longhaul_subdirectory dir)
  if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt)
    message(FATAL_ERROR "${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt is missing: the "
                        "build names the folder ${dir} in ${CMAKE_CURRENT_LIST_FILE}. Restore "
                        "it, or remove it from that file.")
  endif()
  add_subdirectory(${dir})
endmacro()

# Every library `target` links, directly or through other libraries (LINK_LIBRARIES and
# INTERFACE_LINK_LIBRARIES, $<LINK_ONLY:...> unwrapped), into the variable `out`.
function(longhaul_linked_targets target out)
  set(seen "")
  set(todo ${target})
  while(todo)
    list(POP_FRONT todo t)
    if(t IN_LIST seen OR NOT TARGET ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    get_target_property(type ${t} TYPE)
    set(libs "")
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(direct ${t} LINK_LIBRARIES)
      if(direct)
        list(APPEND libs ${direct})
      endif()
    endif()
    get_target_property(iface ${t} INTERFACE_LINK_LIBRARIES)
    if(iface)
      list(APPEND libs ${iface})
    endif()
    foreach(lib IN LISTS libs)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
      if(NOT lib MATCHES "^\\$<")
        list(APPEND todo ${lib})
      endif()
    endforeach()
  endwhile()
  list(REMOVE_ITEM seen ${target})
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# Stops the configure step when `target` links a library defined under stages/: longhauld, the
# agent and the CLI share code with the stages through core/ only (docs/architecture.md).
function(longhaul_assert_links_no_stage_code target)
  longhaul_linked_targets(${target} linked)
  foreach(lib IN LISTS linked)
    get_target_property(dir ${lib} SOURCE_DIR)
    if(dir MATCHES "^${PROJECT_SOURCE_DIR}/stages(/|$)")
      message(FATAL_ERROR "${target} links ${lib} (${dir}): stage code. What a daemon shares "
                          "with the stages belongs in core/ (core/net for networking).")
    endif()
  endforeach()
endfunction()
