// AttemptRunner for processes on this node: the shim is started detached through a
// ProcessLauncher (posix_spawn) and the agent watches it with a pidfd. This is the agent's
// original way of running attempts, unchanged.
#pragma once

#include "agent/lib/attempt_runner.h"

namespace longhaul::agent {

class LocalRunner : public AttemptRunner {
 public:
  explicit LocalRunner(ProcessLauncher* launcher) : launcher_(launcher) {}

  std::string executor() const override { return "local"; }
  bool watches_processes() const override { return true; }
  Result<Started> Start(const RunRequest& req) override;
  // Nothing outlives the request that could be found again: the pid is known at once.
  Result<std::string> Find(int64_t attempt_id, const std::string& attempt_dir) override;
  // SIGTERM to the pid (the agent itself signals through its pidfd instead).
  Status Cancel(const std::string& native_id, bool running) override;
  // Running while the pid exists, else gone; the agent's pidfds tell it more.
  Result<std::map<std::string, NativeState>> Reconcile(
      const std::vector<std::string>& native_ids) override;

 private:
  ProcessLauncher* const launcher_;
};

}  // namespace longhaul::agent
