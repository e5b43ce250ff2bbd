// The scheduler fixture with what preemption tests share: runs of a class, the starts and
// cancels sent, time passing with heartbeats, checkpoint events (preemption_test.cc,
// preemption_restart_test.cc, stop_notice_test.cc).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {

class PreemptionTest : public SchedulerTest {
 protected:
  int64_t SubmitClass(const std::string& yaml, const std::string& klass) {
    return Submit(yaml, {}, klass);
  }
  // Splits what was sent since the last call into starts and cancels.
  void Take(std::vector<v1::StartAttempt>* starts, std::vector<v1::CancelAttempt>* cancels) {
    for (const v1::CoordinatorMessage& m : TakeAll()) {
      if (m.has_start()) starts->push_back(m.start());
      if (m.has_cancel()) cancels->push_back(m.cancel());
    }
  }
  const StageState* Stage(int64_t run, const std::string& name) {
    const RunState* r = scheduler_->FindRun(run);
    EXPECT_NE(r, nullptr);
    if (r == nullptr) return nullptr;
    for (const auto& s : r->stages) {
      if (s->row.name == name) return s.get();
    }
    return nullptr;
  }
  // Lets `ms` go by with the agent of `session` heartbeating (it would be lost otherwise).
  void Pass(uint64_t session, int64_t ms) {
    for (int64_t left = ms; left > 0; left -= 5'000) {
      clock_.AdvanceMs(std::min<int64_t>(left, 5'000));
      Heartbeat(session);
    }
  }
  std::string Checkpoint(int64_t step) {
    return StrCat(R"({"checkpoint": {"path": "ckpt", "step": )", step, "}}");
  }
};

inline std::string OneStage(const std::string& name, int gpus, const std::string& extra = "") {
  return StrCat("name: ", name, "\nstages:\n  ", name, ":\n    run: [train]\n",
                "    resources: {gpus: ", gpus, ", cpus: 1}\n", extra);
}

}  // namespace longhaul::scheduler
