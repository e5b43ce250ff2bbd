// Every GPU of every agent the coordinator has heard of, and whether it may be offered
// (docs/gpus.md, "Health and quarantine"). One owner of GPU health: the scheduler asks it and
// acts on what it returns; it knows nothing of runs.
//
//   ok           offered to attempts;
//   quarantined  a fault the agent reported (a hardware XID, an uncorrectable ECC error, a
//                row remap, a GPU lost from the bus) or a failed pre-flight took it out; after
//                the cool-down the coordinator asks its agent for a pre-flight, and
//                `passes_to_return` passes in a row bring it back (audited as by "preflight");
//   drained      an operator took it out (`longhaul gpu drain`); only `undrain` brings it back.
//
// States are rows of the store (table gpus), written at the batch's end; a restart keeps them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/store/rows.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::scheduler {

struct GpuFleetOptions {
  int64_t cooldown_ms = 10 * 60 * 1000;  // quarantined -> first pre-flight
  int passes_to_return = 2;              // pre-flights passed in a row
  // An agent with this many GPUs quarantined at once is a faulty node: the retry of an
  // attempt ended by a GPU fault there avoids the whole agent, not only the GPU. 0: never.
  int node_fault_limit = 2;
};

class GpuFleet {
 public:
  explicit GpuFleet(GpuFleetOptions options = {}) : options_(options) {}

  // The stored states (at start and after a failed commit: whole replacement).
  void Load(std::vector<store::GpuRow> rows);

  // What a report changed on one GPU.
  struct Fault {
    int index = 0;
    std::string uuid;
    std::string reason;  // "XID 79 (GPU has fallen off the bus)"
    int xid = 0;         // the hardware XID behind it, 0 when another cause
  };
  struct AppXid {
    int index = 0;
    int xid = 0;
    std::string description;
  };
  struct ReportOutcome {
    std::vector<Fault> quarantined;  // GPUs this report took out of service
    std::vector<AppXid> app_xids;    // application-class XIDs: the attempt's, not the GPU's
  };
  // Folds `agent`'s report in: keeps each GPU's reading, quarantines a GPU that turned
  // unhealthy (one already out stays as it is), lists application XIDs.
  ReportOutcome OnReport(const std::string& agent, const std::vector<v1::GpuReading>& gpus,
                         int64_t now_ms);

  // A fault found by a stage on a GPU it held (a failed pre-flight: the stage protocol's
  // gpu_fault event). Quarantines the GPU when it is in service; true when it did.
  bool Quarantine(const std::string& agent, int index, const std::string& uuid,
                  const std::string& reason, int64_t now_ms);

  // Whether GPU `index` of `agent` may be given to an attempt.
  bool Offered(const std::string& agent, int index) const;
  // The GPU's state, or null when the coordinator has no record of it (then it is ok).
  const store::GpuRow* Find(const std::string& agent, int index) const;
  const v1::GpuReading* LastReading(const std::string& agent, int index) const;

  // An operator's drain (`by`: the principal) or undrain. Undrain brings back a drained or a
  // quarantined GPU. Returns the state before; false in `*changed` when nothing changed.
  store::GpuRow Drain(const std::string& agent, int index, const std::string& uuid,
                      const std::string& reason, const std::string& by, int64_t now_ms);
  store::GpuRow Undrain(const std::string& agent, int index, const std::string& by,
                        int64_t now_ms);

  // Quarantined GPUs of `agent` whose pre-flight is due (cool-down passed, none asked).
  std::vector<int> ChecksDue(const std::string& agent, int64_t now_ms);
  // A pre-flight's answer. True when the GPU returned to service with it.
  bool OnChecked(const std::string& agent, int index, bool passed, const std::string& detail,
                 int64_t now_ms);
  // A check asked of `agent` will never be answered (its stream closed): ask again later.
  void ForgetChecks(const std::string& agent);
  // When the next pre-flight falls due (for the timer), if any GPU waits for one.
  std::optional<int64_t> NextCheckMs() const;

  // Rows changed since the last call, for FlushToStore.
  std::vector<store::GpuRow> TakeDirty();

  // Fills the health fields of `info` (index already set) from the record of `agent`.
  void Fill(const std::string& agent, v1::GpuInfo* info) const;

  // How many GPUs of `agent` are quarantined now.
  int QuarantinedOn(const std::string& agent) const;
  const GpuFleetOptions& options() const { return options_; }

  // Counts by state name ("ok" only for GPUs with a record) for /metrics.
  std::map<std::string, int64_t> CountByHealth() const;

 private:
  struct Record {
    store::GpuRow row;
    std::optional<v1::GpuReading> last;
    bool reported_unhealthy = false;  // the agent's last verdict
    int64_t next_check_ms = 0;        // quarantined: when to ask for a pre-flight
    bool check_asked = false;
    bool dirty = false;
  };
  Record& At(const std::string& agent, int index);
  const Record* Get(const std::string& agent, int index) const;
  void SetHealth(Record& r, const std::string& health, const std::string& reason,
                 const std::string& by, int64_t now_ms);

  GpuFleetOptions options_;
  std::map<std::pair<std::string, int>, Record> gpus_;
};

}  // namespace longhaul::scheduler
