#include "agent/lib/native_outcome.h"

#include "agent/lib/readoption.h"
#include "agent/shim/shim.h"
#include "core/strings.h"

namespace longhaul::agent {
namespace {

struct Kind {
  const char* kind;
  const char* what;
};

// The failure kinds of executor states that are not the stage's own doing.
std::optional<Kind> KindOf(const std::string& state) {
  if (state == "PREEMPTED") return Kind{"preempted", "preempted"};
  if (state == "NODE_FAIL") return Kind{"node_fail", "node failure"};
  if (state == "OUT_OF_MEMORY") return Kind{"oom", "out of memory"};
  if (state == "TIMEOUT" || state == "DEADLINE") return Kind{"timeout", "timeout"};
  if (state == "CANCELLED") return Kind{"cancelled_outside", "cancelled outside longhaul"};
  return std::nullopt;
}

}  // namespace

bool SlurmReasonNeverClears(const std::string& reason) {
  static const char* const kNever[] = {
      "PartitionTimeLimit", "PartitionNodeLimit", "BadConstraints",
      "InvalidAccount",     "InvalidQOS",         "QOSMaxWallDurationPerJobLimit"};
  for (const char* r : kNever) {
    if (reason == r) return true;
  }
  return false;
}

std::optional<ExitInfo> DecideNativeExit(const NativeOutcomeInput& in) {
  const bool over = in.state.phase == NativePhase::kEnded || in.state.phase == NativePhase::kGone;
  const std::string job = StrCat("Slurm job ", in.native_id);
  if (!in.shim_exit && !in.cancel && in.state.phase == NativePhase::kPending &&
      SlurmReasonNeverClears(in.state.reason)) {
    return StartFailure(StrCat(job, " cannot run: ", in.state.state, " (", in.state.reason,
                               "), a reason that does not clear by itself"),
                        in.now_ms);
  }
  if (in.shim_exit) {
    const ExitInfo& e = *in.shim_exit;
    // The stage ended by itself, or longhaul stopped it: exit.json says it all.
    bool stopped_by_executor = !in.cancel && (e.signal != 0 || !e.reason.empty());
    if (!stopped_by_executor || e.start_failed) return e;
    if (!over && in.ambiguous_for_ms < kNativeFinalStateWaitMs) return std::nullopt;
    ExitInfo out = e;
    if (auto k = KindOf(in.state.state); k && in.state.phase == NativePhase::kEnded) {
      out.failure_kind = k->kind;
      out.node = in.state.node;
      out.reason = StrCat(k->what, " (", job, " ", in.state.state, ")");
    } else if (e.reason == shim::kTimeLimitReason) {
      out.failure_kind = "timeout";
      out.reason =
          StrCat("timeout (", job, ": the shim stopped the stage before Slurm's time limit)");
    }
    return out;
  }
  if (!over) return std::nullopt;
  if (in.ambiguous_for_ms < kNativeSettleMs) return std::nullopt;  // exit.json may follow
  if (in.cancel) {
    return in.stage_started ? UnknownExit(in.cancel->reason, in.now_ms, false)
                            : StartFailure(in.cancel->reason, in.now_ms);
  }
  if (in.state.phase == NativePhase::kEnded) {
    if (auto k = KindOf(in.state.state)) {
      ExitInfo out =
          UnknownExit(StrCat(k->what, " (", job, " ", in.state.state, ")"), in.now_ms, false);
      out.failure_kind = k->kind;
      out.node = in.state.node;
      return out;
    }
    if (in.state.state == "BOOT_FAIL") {
      return StartFailure(StrCat(job, " ended BOOT_FAIL: its node did not boot"), in.now_ms);
    }
  }
  std::string how = in.state.phase == NativePhase::kGone
                        ? std::string(" is no longer known to Slurm")
                        : StrCat(" ended ", in.state.state);
  return UnknownExit(StrCat("exit status unknown: ", job, how, " without an exit report",
                            in.stage_started ? "" : " (the stage never started)"),
                     in.now_ms, !in.stage_started);
}

}  // namespace longhaul::agent
