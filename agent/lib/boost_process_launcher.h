// ProcessLauncher on Boost.Process v1: fork + exec with exec errors reported to the parent.
#pragma once

#include "agent/lib/process_launcher.h"

namespace longhaul::agent {

class BoostProcessLauncher : public ProcessLauncher {
 public:
  Result<pid_t> Launch(const LaunchSpec& spec) override;
};

}  // namespace longhaul::agent
