# How longhaul builds fast on a 2-core machine (docs/performance.md "Build", measured with
# bench/build/cold.sh). Each choice below was measured; each can be turned off.
#
# - Unity builds (LONGHAUL_UNITY_BUILD, default ON): each target compiles its sources in batches
#   of LONGHAUL_UNITY_BATCH files, so gRPC, Protobuf, Asio/Beast, spdlog and gtest headers are
#   parsed once a batch instead of once a file: parsing is half of a typical file's compile time.
#   A file that cannot share a batch sets SKIP_UNITY_BUILD_INCLUSION (the generated protobuf
#   sources do, below in proto/).
# - Debug info: -g1 (function names and line tables, enough for a backtrace) instead of -g; the
#   full DWARF of -g costs about a third of each compile and makes the test links big.
#   -DCMAKE_BUILD_TYPE=Debug or -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG" for more.
# - The linker: mold, else lld, else the default (LONGHAUL_LINKER=default keeps the default).
# - ccache, when installed, for every second build (never counted in the cold figures).

if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()
# -g1 in place of CMake's -g for RelWithDebInfo; a value given on the command line is kept.
if(NOT DEFINED CACHE{CMAKE_CXX_FLAGS_RELWITHDEBINFO} OR
   "$CACHE{CMAKE_CXX_FLAGS_RELWITHDEBINFO}" STREQUAL "-O2 -g -DNDEBUG")
  set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O2 -g1 -DNDEBUG" CACHE STRING
      "C++ flags for RelWithDebInfo (longhaul: -g1, see cmake/BuildSpeed.cmake)" FORCE)
  set(CMAKE_C_FLAGS_RELWITHDEBINFO "-O2 -g1 -DNDEBUG" CACHE STRING
      "C flags for RelWithDebInfo (longhaul: -g1, see cmake/BuildSpeed.cmake)" FORCE)
endif()

option(LONGHAUL_UNITY_BUILD "Compile each target's sources in batches (faster cold builds)" ON)
set(LONGHAUL_UNITY_BATCH 8 CACHE STRING "Sources per unity batch")
if(LONGHAUL_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${LONGHAUL_UNITY_BATCH})
endif()

set(LONGHAUL_LINKER "auto" CACHE STRING "Linker: auto (mold, else lld, else default), mold, lld, default")
if(NOT LONGHAUL_LINKER STREQUAL "default")
  include(CheckLinkerFlag)
  set(candidates ${LONGHAUL_LINKER})
  if(LONGHAUL_LINKER STREQUAL "auto")
    set(candidates mold lld)
  endif()
  foreach(ld IN LISTS candidates)
    check_linker_flag(CXX "-fuse-ld=${ld}" LONGHAUL_HAVE_LD_${ld})
    if(LONGHAUL_HAVE_LD_${ld})
      add_link_options(-fuse-ld=${ld})
      message(STATUS "longhaul: linking with ${ld}")
      break()
    endif()
  endforeach()
endif()

find_program(LONGHAUL_CCACHE ccache)
option(LONGHAUL_CCACHE_ENABLE "Compile through ccache when it is installed" ON)
if(LONGHAUL_CCACHE AND LONGHAUL_CCACHE_ENABLE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # Paths under the checkout are hashed relative to it, so a second clone of the same commit
  # (CI's, a worktree) reuses the first one's objects.
  set(launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1
      ${LONGHAUL_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
endif()
