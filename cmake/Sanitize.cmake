# LONGHAUL_SANITIZE: every target built with AddressSanitizer and UndefinedBehaviorSanitizer,
# and any undefined behaviour aborts (-fno-sanitize-recover), so a test that meets one fails.
# LONGHAUL_FUZZ: also the libFuzzer targets of tests/fuzz; the libraries get the coverage
# instrumentation libFuzzer needs (-fsanitize=fuzzer-no-link). Both need clang; deploy/sanitize.sh
# configures such a build in ./build-asan and builds only the `sanitize` target (unit tests and
# fuzzers), not the stage binaries or the integration tests.
option(LONGHAUL_SANITIZE "Build with -fsanitize=address,undefined (clang)" OFF)
option(LONGHAUL_FUZZ "Build the libFuzzer targets in tests/fuzz (clang; implies LONGHAUL_SANITIZE)"
       OFF)
if(LONGHAUL_FUZZ)
  set(LONGHAUL_SANITIZE ON CACHE BOOL "" FORCE)
endif()
if(LONGHAUL_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LONGHAUL_SANITIZE and LONGHAUL_FUZZ need clang (libFuzzer and the "
                        "sanitizer runtimes come with it), but the C++ compiler is "
                        "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}. Configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang, as "
                        "deploy/sanitize.sh does.")
  endif()
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  if(LONGHAUL_FUZZ)
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
endif()
