// scheduler_bench_stage FILE: the benchmark's trivial stage. Appends one line
//   "$LONGHAUL_STAGE START_NS END_NS"
// to FILE (realtime clock, nanoseconds): START when main() begins, END just before it exits.
// The stage's own wall clock, to check the times the shim records. libc only, so that it
// starts about as fast as /bin/true.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

long long NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  long long start = NowNs();
  if (argc != 2) {
    std::fprintf(stderr, "usage: scheduler_bench_stage FILE\n");
    return 2;
  }
  const char* stage = std::getenv("LONGHAUL_STAGE");
  int fd = ::open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "scheduler_bench_stage: open %s: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  char line[256];
  long long end = NowNs();
  int n = std::snprintf(line, sizeof line, "%s %lld %lld\n", stage ? stage : "-", start, end);
  // One write with O_APPEND: lines of concurrent stages never interleave.
  bool ok = ::write(fd, line, static_cast<size_t>(n)) == n;
  ::close(fd);
  return ok ? 0 : 1;
}
