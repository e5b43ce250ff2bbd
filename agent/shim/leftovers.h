// What is left of an attempt after its main process ended: every process the stage started
// that is still alive, found through /proc, and how the shim ends them all before it writes
// exit.json (docs/agent.md, "Processes that outlive the stage"). Plain POSIX.
//
// A process belongs to the attempt when it is in the stage's process group, in the shim's
// session (only when the shim leads its session), a child of the shim (the shim is a child
// subreaper, so the orphans of the stage's tree, a `setsid`ed helper or a double-forked
// daemon, are re-parented to it), or a descendant of any of these.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace longhaul::shim {

// One line of /proc/PID/stat, the fields that matter here.
struct ProcEntry {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  pid_t sid = 0;
  char state = '?';  // 'Z' for a zombie
};

// Every process /proc lists now (those that vanish while it is read are left out).
std::vector<ProcEntry> ListProcesses();

// Which processes of `all` belong to the attempt (rule above), zombies left out: `shim` is the
// shim's pid, `stage_pgid` the stage's process group, `session` the shim's session when it
// leads one (else 0: no session rule). The shim itself is never in it.
std::vector<pid_t> AttemptProcesses(const std::vector<ProcEntry>& all, pid_t shim, pid_t stage_pgid,
                                    pid_t session);

// SIGKILLs every process of the attempt, again and again until /proc shows none (a dying
// process may still fork) or `wait_ms` passes, calling `reap` (which must reap the shim's
// children without blocking) and `pause` (a short wait for SIGCHLD) between rounds. Returns
// how many distinct processes it killed.
int KillAttemptProcesses(pid_t shim, pid_t stage_pgid, pid_t session, int64_t wait_ms,
                         const std::function<void()>& reap, const std::function<void()>& pause);

// "1 process outlived the stage and was killed", "2 processes outlived ..."; "" for 0.
std::string LeftoversNote(int killed);

}  // namespace longhaul::shim
