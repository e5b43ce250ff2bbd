// Process limits a daemon sets for itself at start.
#pragma once

#include <cstdint>

namespace longhaul {

// Raises this process's soft limit on open files to its hard limit, and returns the soft limit
// now in force (-1 when it cannot be read). A daemon holds a few descriptors per attempt or
// connection; the usual soft limit of 1024 would fail the 500th concurrent attempt with EMFILE
// while the hard limit allows far more. Call once, first thing in main.
int64_t RaiseOpenFileLimit();

}  // namespace longhaul
