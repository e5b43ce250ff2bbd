// FUZZ_CHECK(cond, what): a property a fuzz target asserts about the code under test. When it
// does not hold, prints `what` and aborts, so that libFuzzer (and the corpus replay) report
// the input as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                           \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond, \
                   what);                                                                \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)
