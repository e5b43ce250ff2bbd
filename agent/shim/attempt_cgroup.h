// One attempt's cgroup (cgroup v2): how its stage enters it, what it used, and how everything
// in it is ended (docs/agent.md, "Processes that outlive the stage"). Plain POSIX, for the
// shim and for the agent's sweep after a shim that died.
//
// The stage enters the cgroup between fork and exec, so it and everything it forks is inside
// from its first instruction; the shim itself stays outside, so that `cgroup.kill` cannot end
// the process that still has to write exit.json.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace longhaul::shim {

// Makes the cgroup `dir` (one that exists is used as it is) and opens its cgroup.procs for
// writing (O_CLOEXEC). Returns the descriptor, or -1 with `*err` an errno value.
int OpenCgroupProcs(const std::string& dir, int* err);

// Moves the calling process into the cgroup whose cgroup.procs is `procs_fd`. Async-signal-safe
// (for a forked child). Returns 0 or an errno value.
int EnterCgroup(int procs_fd);

// The processes in `dir` and every cgroup below it, as cgroup.procs lists them (no zombies).
std::vector<pid_t> CgroupProcesses(const std::string& dir);

// What the cgroup's processes used, from its files; -1 where unknown (the memory controller is
// not enabled for it, or the file is missing).
struct CgroupUsage {
  int64_t memory_peak_bytes = -1;  // memory.peak, else memory.current
  int64_t cpu_usec = -1;           // cpu.stat usage_usec (there even without the cpu controller)
};
CgroupUsage ReadCgroupUsage(const std::string& dir);
// Parses cpu.stat's text: usage_usec's value, or -1.
int64_t ParseCpuStatUsage(const std::string& text);

// Kills every process in the cgroup `dir` and below (cgroup.kill; on a kernel without it,
// SIGKILL to each listed process, again until none is left), waits until it is empty for up
// to `wait_ms`, calling `reap` between rounds (it must reap the caller's children without
// blocking), reads `usage` (when given) and removes `dir` and the cgroups below it. Returns how
// many processes it killed, or -1 with `*error` set when the cgroup was not emptied in time.
// A cgroup emptied but not removed sets `*error` too, with the count returned.
int KillCgroup(const std::string& dir, int64_t wait_ms, const std::function<void()>& reap,
               CgroupUsage* usage, std::string* error);

}  // namespace longhaul::shim
