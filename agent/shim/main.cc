// longhaul-shim: see shim.h.
#include <cstdio>
#include <string>
#include <vector>

#include "agent/shim/shim.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  longhaul::shim::ShimOptions opts;
  std::string error;
  if (!longhaul::shim::ParseShimArgs(args, &opts, &error)) {
    std::fprintf(stderr,
                 "longhaul-shim: %s\nusage: longhaul-shim --dir ATTEMPT_DIR [--grace-ms N] "
                 "[--cgroup DIR] -- "
                 "PROGRAM ARGS...\n",
                 error.c_str());
    return longhaul::shim::kShimUsage;
  }
  return longhaul::shim::RunShim(opts);
}
