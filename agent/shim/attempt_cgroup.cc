#include "agent/shim/attempt_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "agent/shim/shim_files.h"

namespace longhaul::shim {
namespace {

// The cgroups directly below `dir` (its subdirectories), as paths.
std::vector<std::string> ChildCgroups(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* ent = ::readdir(d)) {
    if (ent->d_type != DT_DIR || ent->d_name[0] == '.') continue;
    out.push_back(dir + "/" + ent->d_name);
  }
  ::closedir(d);
  return out;
}

// cgroup.events (open as `events`, else read by path) says "populated 1" while a live process
// is in the cgroup or below it. A cgroup that is gone or unreadable holds nobody. Reading the
// open file also re-arms its poll (kernfs reports a change until the file is read again).
bool CgroupPopulated(const std::string& dir, int events) {
  std::string text;
  if (events >= 0) {
    char buf[256];
    ssize_t n = ::pread(events, buf, sizeof buf - 1, 0);
    if (n <= 0) return false;
    text.assign(buf, static_cast<size_t>(n));
  } else if (!ReadSmallFile(dir + "/cgroup.events", &text)) {
    return false;
  }
  return text.find("populated 1") != std::string::npos;
}

int WriteSmall(const std::string& path, const char* text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  size_t len = std::strlen(text);
  int err = ::write(fd, text, len) == static_cast<ssize_t>(len) ? 0 : errno;
  ::close(fd);
  return err;
}

// Depth first: a cgroup with cgroups below it cannot be removed. 0 or an errno value.
int RemoveCgroupTree(const std::string& dir) {
  for (const std::string& child : ChildCgroups(dir)) {
    if (int err = RemoveCgroupTree(child); err != 0) return err;
  }
  return ::rmdir(dir.c_str()) == 0 || errno == ENOENT ? 0 : errno;
}

int64_t ReadNumberFile(const std::string& path) {
  std::string text;
  if (!ReadSmallFile(path, &text) || text.empty()) return -1;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  return end == text.c_str() || v < 0 ? -1 : v;
}

}  // namespace

int OpenCgroupProcs(const std::string& dir, int* err) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    *err = errno;
    return -1;
  }
  int fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) *err = errno;
  return fd;
}

int EnterCgroup(int procs_fd) {
  // "0" is the writer itself.
  return ::write(procs_fd, "0", 1) == 1 ? 0 : errno;
}

std::vector<pid_t> CgroupProcesses(const std::string& dir) {
  std::vector<pid_t> out;
  std::string text;
  if (ReadSmallFile(dir + "/cgroup.procs", &text)) {
    const char* p = text.c_str();
    char* end = nullptr;
    for (long v = std::strtol(p, &end, 10); end != p; v = std::strtol(p, &end, 10)) {
      if (v > 0) out.push_back(static_cast<pid_t>(v));
      p = end;
    }
  }
  for (const std::string& child : ChildCgroups(dir)) {
    std::vector<pid_t> below = CgroupProcesses(child);
    out.insert(out.end(), below.begin(), below.end());
  }
  return out;
}

int64_t ParseCpuStatUsage(const std::string& text) {
  constexpr char kKey[] = "usage_usec ";
  size_t at = 0;
  while ((at = text.find(kKey, at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') {
      char* end = nullptr;
      const char* start = text.c_str() + at + sizeof kKey - 1;
      long long v = std::strtoll(start, &end, 10);
      return end == start || v < 0 ? -1 : v;
    }
    at += sizeof kKey - 1;
  }
  return -1;
}

CgroupUsage ReadCgroupUsage(const std::string& dir) {
  CgroupUsage u;
  u.memory_peak_bytes = ReadNumberFile(dir + "/memory.peak");
  if (u.memory_peak_bytes < 0) u.memory_peak_bytes = ReadNumberFile(dir + "/memory.current");
  std::string cpu;
  if (ReadSmallFile(dir + "/cpu.stat", &cpu)) u.cpu_usec = ParseCpuStatUsage(cpu);
  return u;
}

int KillCgroup(const std::string& dir, int64_t wait_ms, const std::function<void()>& reap,
               CgroupUsage* usage, std::string* error) {
  std::set<pid_t> killed;
  for (pid_t p : CgroupProcesses(dir)) killed.insert(p);
  // cgroup.kill (Linux 5.14) ends the whole subtree at once, forks in flight included.
  bool one_write = !killed.empty() && WriteSmall(dir + "/cgroup.kill", "1") == 0;
  int events = ::open((dir + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC);
  int64_t deadline = WallMs() + wait_ms;
  for (;;) {
    reap();
    if (!CgroupPopulated(dir, events)) break;
    if (WallMs() >= deadline) {
      if (events >= 0) ::close(events);
      *error = "processes still in " + dir + " after " + std::to_string(wait_ms) + " ms";
      return -1;
    }
    for (pid_t p : CgroupProcesses(dir)) {
      if (killed.insert(p).second || !one_write) ::kill(p, SIGKILL);
    }
    // cgroup.events changes (POLLPRI) when the last process leaves; else look again soon.
    pollfd pfd{events, POLLPRI, 0};
    if (events < 0 || ::poll(&pfd, 1, 10) < 0) {
      timespec ts{0, 10'000'000};
      ::nanosleep(&ts, nullptr);
    }
  }
  reap();
  if (events >= 0) ::close(events);
  if (usage != nullptr) *usage = ReadCgroupUsage(dir);
  // An emptied cgroup may still be busy for a moment while its last process is released.
  for (;;) {
    int err = RemoveCgroupTree(dir);
    if (err == 0) break;
    if (err != EBUSY || WallMs() >= deadline) {
      *error = "cannot remove " + dir + ": " + std::strerror(err);
      break;
    }
    timespec ts{0, 1'000'000};
    ::nanosleep(&ts, nullptr);
  }
  return static_cast<int>(killed.size());
}

}  // namespace longhaul::shim
