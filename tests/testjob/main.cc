// lh-testjob: see testjob_options.cc for the flags (or run it with --help).
#include <cstdio>
#include <string>
#include <vector>

#include "tests/testjob/testjob.h"
#include "tests/testjob/testjob_options.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto opts = longhaul::testjob::ParseTestJobArgs(args);
  if (!opts.ok()) {
    std::fprintf(stderr, "lh-testjob: %s\n", std::string(opts.status().message()).c_str());
    return 2;
  }
  if (opts->help) {
    std::fputs(longhaul::testjob::TestJobHelp().c_str(), stdout);
    return 0;
  }
  return longhaul::testjob::RunTestJob(*opts);
}
