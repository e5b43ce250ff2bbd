// pidfd system calls (Linux >= 5.3). Called directly: Debian 12's <sys/pidfd.h> lacks
// extern "C", so its wrappers do not link from C++.
#pragma once

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace longhaul::agent {

// A descriptor that becomes readable when process `pid` ends (it need not be our child);
// -1 with errno on failure. Close-on-exec.
inline int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

inline int PidfdSendSignal(int pidfd, int sig) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

}  // namespace longhaul::agent
