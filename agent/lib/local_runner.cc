#include "agent/lib/local_runner.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {
namespace {

Result<pid_t> ParsePid(const std::string& id) {
  char* end = nullptr;
  long v = std::strtol(id.c_str(), &end, 10);
  if (id.empty() || *end != '\0' || v <= 0) {
    return absl::InvalidArgumentError(StrCat("not a pid: '", id, "'"));
  }
  return static_cast<pid_t>(v);
}

}  // namespace

Result<Started> LocalRunner::Start(const RunRequest& req) {
  auto pid = launcher_->Launch(req.shim);
  if (!pid.ok()) return pid.status();
  return Started{std::to_string(*pid), *pid};
}

Result<std::string> LocalRunner::Find(int64_t attempt_id, const std::string& /*attempt_dir*/) {
  return absl::NotFoundError(StrCat("attempt ", attempt_id, ": no local process is looked up"));
}

Status LocalRunner::Cancel(const std::string& native_id, bool) {
  auto pid = ParsePid(native_id);
  if (!pid.ok()) return pid.status();
  if (::kill(*pid, SIGTERM) != 0) return ErrnoStatus("kill", native_id, errno);
  return OkStatus();
}

Result<std::map<std::string, NativeState>> LocalRunner::Reconcile(
    const std::vector<std::string>& native_ids) {
  std::map<std::string, NativeState> out;
  for (const auto& id : native_ids) {
    auto pid = ParsePid(id);
    if (!pid.ok()) continue;
    bool alive = ::kill(*pid, 0) == 0 || errno == EPERM;
    out[id] = alive ? NativeState{NativePhase::kRunning, "running", "", ""}
                    : NativeState{NativePhase::kGone, "gone", "", ""};
  }
  return out;
}

}  // namespace longhaul::agent
