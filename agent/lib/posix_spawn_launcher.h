// ProcessLauncher on posix_spawn(3). glibc starts the child with clone(CLONE_VM|CLONE_VFORK):
// no copy of the agent's page tables, and the calling thread waits only until the child has
// exec'd. Exec errors (not found, permission denied, a bad working directory) come back as
// posix_spawn's result. Needs glibc >= 2.34 (POSIX_SPAWN_SETSID, closefrom, chdir actions).
// One exception to "default dispositions": glibc leaves its internal signals 32 and 33
// ignored in the child, and no API of glibc's can undo that; longhaul-shim resets them itself.
#pragma once

#include "agent/lib/process_launcher.h"

namespace longhaul::agent {

class PosixSpawnLauncher : public ProcessLauncher {
 public:
  Result<pid_t> Launch(const LaunchSpec& spec) override;
};

}  // namespace longhaul::agent
