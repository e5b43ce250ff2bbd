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
