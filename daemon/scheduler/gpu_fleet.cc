#include "daemon/scheduler/gpu_fleet.h"

#include "core/strings.h"

namespace longhaul::scheduler {

void GpuFleet::Load(std::vector<store::GpuRow> rows) {
  gpus_.clear();
  for (store::GpuRow& row : rows) {
    Record& r = gpus_[{row.agent_id, row.gpu_index}];
    r.row = std::move(row);
    // A GPU quarantined before a restart is checked again after a cool-down from now.
    r.next_check_ms = 0;
    // The agent's verdict that quarantined it was heard: the same verdict in its first report
    // after a restart is not a new fault (an admin may have brought the GPU back meanwhile).
    r.reported_unhealthy = r.row.health == "quarantined" && r.row.by == "agent";
  }
}

GpuFleet::Record& GpuFleet::At(const std::string& agent, int index) {
  Record& r = gpus_[{agent, index}];
  if (r.row.agent_id.empty()) {
    r.row.agent_id = agent;
    r.row.gpu_index = index;
  }
  return r;
}

const GpuFleet::Record* GpuFleet::Get(const std::string& agent, int index) const {
  auto it = gpus_.find({agent, index});
  return it == gpus_.end() ? nullptr : &it->second;
}

void GpuFleet::SetHealth(Record& r, const std::string& health, const std::string& reason,
                         const std::string& by, int64_t now_ms) {
  r.row.health = health;
  r.row.reason = reason;
  r.row.by = by;
  r.row.since_ms = now_ms;
  r.row.passes = 0;
  r.check_asked = false;
  r.next_check_ms = health == "quarantined" ? now_ms + options_.cooldown_ms : 0;
  r.dirty = true;
}

GpuFleet::ReportOutcome GpuFleet::OnReport(const std::string& agent,
                                           const std::vector<v1::GpuReading>& gpus,
                                           int64_t now_ms) {
  ReportOutcome out;
  for (const v1::GpuReading& g : gpus) {
    Record& r = At(agent, g.index());
    if (!g.uuid().empty() && r.row.uuid != g.uuid()) {
      r.row.uuid = g.uuid();
      r.dirty = true;
    }
    r.last = g;
    int hardware_xid = 0;
    for (const v1::GpuReading::Xid& x : g.xids()) {
      if (x.klass() == "hardware" && hardware_xid == 0) hardware_xid = x.xid();
      if (x.klass() == "application") out.app_xids.push_back({g.index(), x.xid(), x.description()});
    }
    // A new fault: the agent's verdict turned unhealthy, or a hardware XID arrived (also on a
    // GPU the agent already called unhealthy).
    bool turned = !g.healthy() && !r.reported_unhealthy;
    r.reported_unhealthy = !g.healthy();
    if ((turned || hardware_xid != 0) && r.row.health == "ok") {
      std::string reason = g.fault().empty() ? StrCat("XID ", hardware_xid) : g.fault();
      SetHealth(r, "quarantined", reason, "agent", now_ms);
      out.quarantined.push_back({g.index(), r.row.uuid, reason, hardware_xid});
    }
  }
  return out;
}

bool GpuFleet::Quarantine(const std::string& agent, int index, const std::string& uuid,
                          const std::string& reason, int64_t now_ms) {
  Record& r = At(agent, index);
  if (!uuid.empty() && r.row.uuid.empty()) r.row.uuid = uuid;
  if (r.row.health != "ok") return false;
  SetHealth(r, "quarantined", reason, "stage", now_ms);
  return true;
}

int GpuFleet::QuarantinedOn(const std::string& agent) const {
  int n = 0;
  for (auto it = gpus_.lower_bound({agent, INT32_MIN});
       it != gpus_.end() && it->first.first == agent; ++it) {
    if (it->second.row.health == "quarantined") ++n;
  }
  return n;
}

bool GpuFleet::Offered(const std::string& agent, int index) const {
  const Record* r = Get(agent, index);
  return r == nullptr || r->row.health == "ok";
}

const store::GpuRow* GpuFleet::Find(const std::string& agent, int index) const {
  const Record* r = Get(agent, index);
  return r == nullptr ? nullptr : &r->row;
}

const v1::GpuReading* GpuFleet::LastReading(const std::string& agent, int index) const {
  const Record* r = Get(agent, index);
  return r == nullptr || !r->last ? nullptr : &*r->last;
}

store::GpuRow GpuFleet::Drain(const std::string& agent, int index, const std::string& uuid,
                              const std::string& reason, const std::string& by, int64_t now_ms) {
  Record& r = At(agent, index);
  store::GpuRow before = r.row;
  if (!uuid.empty() && r.row.uuid.empty()) r.row.uuid = uuid;
  if (r.row.health != "drained") SetHealth(r, "drained", reason, by, now_ms);
  return before;
}

store::GpuRow GpuFleet::Undrain(const std::string& agent, int index, const std::string& by,
                                int64_t now_ms) {
  Record& r = At(agent, index);
  store::GpuRow before = r.row;
  if (r.row.health != "ok") SetHealth(r, "ok", "", by, now_ms);
  return before;
}

std::vector<int> GpuFleet::ChecksDue(const std::string& agent, int64_t now_ms) {
  std::vector<int> due;
  for (auto it = gpus_.lower_bound({agent, INT32_MIN});
       it != gpus_.end() && it->first.first == agent; ++it) {
    Record& r = it->second;
    if (r.row.health != "quarantined" || r.check_asked) continue;
    if (r.next_check_ms == 0) r.next_check_ms = now_ms + options_.cooldown_ms;
    if (now_ms < r.next_check_ms) continue;
    r.check_asked = true;
    due.push_back(it->first.second);
  }
  return due;
}

bool GpuFleet::OnChecked(const std::string& agent, int index, bool passed,
                         const std::string& detail, int64_t now_ms) {
  auto it = gpus_.find({agent, index});
  if (it == gpus_.end() || it->second.row.health != "quarantined") return false;
  Record* r = &it->second;
  r->check_asked = false;
  r->next_check_ms = now_ms + options_.cooldown_ms;
  r->dirty = true;
  if (!passed) {
    r->row.passes = 0;
    return false;
  }
  if (++r->row.passes < options_.passes_to_return) return false;
  SetHealth(*r, "ok", StrCat("returned after ", options_.passes_to_return, " passing pre-flights"),
            "preflight", now_ms);
  r->reported_unhealthy = false;  // the agent cleared its own verdict with the pass
  return true;
}

void GpuFleet::ForgetChecks(const std::string& agent) {
  for (auto it = gpus_.lower_bound({agent, INT32_MIN});
       it != gpus_.end() && it->first.first == agent; ++it) {
    it->second.check_asked = false;
  }
}

std::optional<int64_t> GpuFleet::NextCheckMs() const {
  std::optional<int64_t> next;
  for (const auto& [key, r] : gpus_) {
    if (r.row.health != "quarantined" || r.check_asked || r.next_check_ms == 0) continue;
    if (!next || r.next_check_ms < *next) next = r.next_check_ms;
  }
  return next;
}

std::vector<store::GpuRow> GpuFleet::TakeDirty() {
  std::vector<store::GpuRow> rows;
  for (auto& [key, r] : gpus_) {
    if (!r.dirty) continue;
    r.dirty = false;
    rows.push_back(r.row);
  }
  return rows;
}

void GpuFleet::Fill(const std::string& agent, v1::GpuInfo* info) const {
  const Record* r = Get(agent, info->index());
  if (r == nullptr) {
    info->set_health("ok");
    return;
  }
  if (info->uuid().empty()) info->set_uuid(r->row.uuid);
  info->set_health(r->row.health);
  info->set_health_reason(r->row.reason);
  info->set_health_since_ms(r->row.since_ms);
  if (r->last) *info->mutable_reading() = *r->last;
}

std::map<std::string, int64_t> GpuFleet::CountByHealth() const {
  std::map<std::string, int64_t> n;
  for (const auto& [key, r] : gpus_) ++n[r.row.health];
  return n;
}

}  // namespace longhaul::scheduler
