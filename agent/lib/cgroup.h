// Where the agent puts its attempts' cgroups (cgroup v2), from --cgroup-root (docs/agent.md,
// "Processes that outlive the stage"):
//
//   auto   the agent's own cgroup (the "0::" line of /proc/self/cgroup, under the cgroup2
//          mount of /proc/self/mountinfo), with the attempts in its child `longhaul-attempts`.
//          cgroup v2 lets a cgroup enable controllers for its children only while no process
//          is in it. An agent started in a leaf named `agent` (systemd's Delegate=yes with
//          DelegateSubgroup=agent) uses the cgroup above it and enables memory and cpu there.
//          One alone in its cgroup moves itself into the leaf `agent` but enables nothing: its
//          next start (a restart of the unit) is placed in that cgroup again, which the kernel
//          refuses while controllers are enabled for its children. The root cgroup, which the
//          rule exempts, is used as it is.
//   none   no cgroups: leftovers are found through /proc alone.
//   PATH   a writable cgroup2 directory, made if missing, whose children are the attempts'.
//
// Each attempt's cgroup is PARENT/attempt-ID-HASH, given to the shim (--cgroup), which the
// stage enters; the shim, or the agent after a shim that died, kills and removes it
// (agent/shim/attempt_cgroup.h). Where the memory and cpu controllers can be enabled for
// them, the attempts' memory is accounted too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul::agent {

struct Cgroup2Mount {
  std::string point;  // where it is mounted: /sys/fs/cgroup, /sys/fs/cgroup/unified
  std::string root;   // the cgroup at that point: "/" unless in a cgroup namespace's view
};

// The first cgroup2 mount in /proc/self/mountinfo's text; NotFound: "cgroup v2 not mounted".
Result<Cgroup2Mount> FindCgroup2Mount(std::string_view mountinfo);

// The cgroup v2 path ("0::PATH") in /proc/self/cgroup's text; NotFound when there is none.
Result<std::string> ParseOwnCgroup(std::string_view proc_self_cgroup);

// The directory of cgroup `path` (as /proc/self/cgroup names it) under `mount`.
Result<std::string> CgroupDirectory(const Cgroup2Mount& mount, const std::string& path);

struct AttemptCgroups {
  std::string parent;  // where attempts' cgroups are made; empty: no cgroups
  std::string note;    // what the agent says at start: which, or why not
};

// Resolves --cgroup-root ("auto", "none" or a path) on this machine, making the directories
// and enabling the controllers it can, and (auto) moving the agent into its leaf.
AttemptCgroups SetUpAttemptCgroups(const std::string& flag);

// "attempt-ID-HASH": HASH (8 hex digits of the attempt dir's path) tells apart the attempts
// of one id of agents that share a parent (two agents in the root cgroup of one host).
std::string AttemptCgroupName(int64_t attempt_id, const std::string& attempt_dir);

}  // namespace longhaul::agent
