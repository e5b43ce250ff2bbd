// agents: the nodes the coordinator knows.
#include <algorithm>
#include <map>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/table.h"
#include "cli/terminal_text.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::cli {
namespace {

std::string GiB(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(bytes) / (1LL << 30));
  return buf;
}

// "gpu=h200,zone=a" (sorted by key), "-" when none.
std::string Labels(const v1::AgentInfo& a) {
  std::map<std::string, std::string> sorted(a.labels().begin(), a.labels().end());
  std::vector<std::string> parts;
  for (const auto& [k, v] : sorted) parts.push_back(StrCat(k, "=", v));
  return parts.empty() ? "-" : StrJoin(parts, ",");
}

}  // namespace

int ListAgents(CommandContext& ctx) {
  Result<v1::ListAgentsResponse> resp = ctx.coordinator->ListAgents();
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  if (resp->agents().empty()) {
    ctx.err() << "no agents have connected\n";
    return kExitOk;
  }
  Table table({"ID", "HOST", "STATE", "CPUS", "MEMORY", "GPUS", "RUNNING", "LAST SEEN", "LABELS",
               "SHARED PATHS"});
  table.AlignRight(3);
  table.AlignRight(4);
  table.AlignRight(5);
  table.AlignRight(6);
  int64_t now = ctx.NowMs();
  for (const v1::AgentInfo& a : resp->agents()) {
    const v1::Resources& free = a.free();
    const v1::Resources& total = a.total();
    // A full state dir is part of the state: the agent runs on, but its files may be lost.
    std::string state(AgentStateName(a.state()));
    if (a.disk_full()) state += ", disk full";
    table.AddRow({a.id(), a.hostname(), state,
                  StrCat(FormatNumber(free.cpus()), "/", FormatNumber(total.cpus())),
                  StrCat(GiB(free.memory_bytes()), "/", GiB(total.memory_bytes()), " GiB"),
                  StrCat(free.gpus(), "/", total.gpus()), std::to_string(a.running_attempts()),
                  FormatAgo(a.last_seen_ms(), now), Labels(a),
                  a.shared_paths().empty()
                      ? "-"
                      : StrJoin({a.shared_paths().begin(), a.shared_paths().end()}, ",")});
  }
  table.Render(ctx.out());
  // Maintenance windows (docs/scheduling.md, "Maintenance").
  for (const v1::AgentInfo& a : resp->agents()) {
    if (a.has_drain()) ctx.out() << DescribeDrain(a.id(), a.drain(), now) << "\n";
  }
  // Reservations (docs/scheduling.md, "Reservations").
  for (const v1::AgentInfo& a : resp->agents()) {
    for (const v1::Reservation& r : a.reservations()) {
      ctx.out() << DescribeReservation(r) << "\n";
    }
  }
  // Each GPU: its service state and why, its last reading, the attempt holding it.
  Table gpus(
      {"AGENT", "GPU", "HEALTH", "UTIL", "MEMORY", "POWER", "TEMP", "HELD BY", "UUID", "WHY"});
  bool any = false;
  for (const v1::AgentInfo& a : resp->agents()) {
    for (const v1::GpuInfo& g : a.gpus()) {
      any = true;
      const v1::GpuReading& r = g.reading();
      bool read = g.has_reading();
      gpus.AddRow(
          {a.id(), std::to_string(g.index()), g.health().empty() ? "ok" : g.health(),
           read && r.has_sm_util_pct() ? StrCat(FormatNumber(r.sm_util_pct()), "%") : "-",
           read && r.has_mem_used_bytes()
               ? StrCat(GiB(r.mem_used_bytes()), "/", GiB(r.mem_total_bytes()), " GiB")
               : "-",
           read && r.has_power_watts() ? StrCat(FormatNumber(r.power_watts()), " W") : "-",
           read && r.has_temperature_c() ? StrCat(FormatNumber(r.temperature_c()), " C") : "-",
           g.attempt_id() > 0 ? StrCat("run ", g.run_id(), " ", g.stage()) : "-",
           g.uuid().empty() ? "-" : g.uuid(),
           g.health_reason().empty() ? "-" : TerminalSafe(g.health_reason())});
    }
  }
  if (any) {
    ctx.out() << "\n";
    gpus.Render(ctx.out());
  }
  return kExitOk;
}

// "a1:3" -> ("a1", 3); "a1" -> ("a1", -1).
Result<std::pair<std::string, int>> ParseAgentGpu(const std::string& target) {
  size_t colon = target.rfind(':');
  if (colon == std::string::npos) return std::pair<std::string, int>{target, -1};
  std::string agent = target.substr(0, colon);
  std::string gpu = target.substr(colon + 1);
  int index = -1;
  if (agent.empty() || gpu.empty() ||
      !std::all_of(gpu.begin(), gpu.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      gpu.size() > 4) {
    return absl::InvalidArgumentError(
        StrCat("'", target, "': expected AGENT or AGENT:GPU, such as a1 or a1:3"));
  }
  index = std::stoi(gpu);
  return std::pair<std::string, int>{agent, index};
}

int DrainGpu(CommandContext& ctx, const std::string& target, const std::string& reason,
             bool undrain) {
  Result<std::pair<std::string, int>> parsed = ParseAgentGpu(target);
  if (!parsed.ok()) return ctx.Fail(parsed.status());
  v1::DrainGpuRequest req;
  req.set_agent_id(parsed->first);
  req.set_gpu(parsed->second);
  req.set_undrain(undrain);
  req.set_reason(reason);
  Result<v1::DrainGpuResponse> resp = ctx.coordinator->DrainGpu(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  for (const v1::GpuInfo& g : resp->gpus()) {
    ctx.out() << "agent " << parsed->first << " GPU " << g.index()
              << (g.uuid().empty() ? "" : StrCat(" (", g.uuid(), ")")) << ": " << g.health()
              << (g.health_reason().empty() ? ""
                                            : StrCat(" (", TerminalSafe(g.health_reason()), ")"))
              << "\n";
  }
  return kExitOk;
}

int SetBudget(CommandContext& ctx, int64_t run_id, double gpu_hours) {
  v1::SetRunBudgetRequest req;
  req.set_run_id(run_id);
  req.set_gpu_hours(gpu_hours);
  Result<v1::Run> run = ctx.coordinator->SetRunBudget(req);
  if (!run.ok()) return ctx.Fail(run.status());
  if (ctx.json) return PrintJson(ctx, *run);
  const v1::RunBudget& b = run->budget();
  ctx.out() << "run " << run_id << ": budget " << FormatBudgetHours(b.gpu_hours()) << " GPU-h, "
            << FormatBudgetHours(b.used_gpu_hours()) << " used"
            << (b.reached() ? "; still reached: no new attempts" : "; new attempts may start")
            << "\n";
  return kExitOk;
}

int SetPriority(CommandContext& ctx, int64_t run_id, const std::string& priority) {
  v1::SetRunPriorityRequest req;
  req.set_run_id(run_id);
  req.set_priority(priority);
  Result<v1::Run> run = ctx.coordinator->SetRunPriority(req);
  if (!run.ok()) return ctx.Fail(run.status());
  if (ctx.json) return PrintJson(ctx, *run);
  ctx.out() << "run " << run_id << ": class " << run->priority()
            << "; its waiting stages take their place in the queue, running attempts go on\n";
  return kExitOk;
}

}  // namespace longhaul::cli
