// agents: the nodes the coordinator knows.
#include <map>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/table.h"
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
  Table table(
      {"ID", "HOST", "STATE", "CPUS", "MEMORY", "GPUS", "RUNNING", "LAST SEEN", "LABELS",
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
  return kExitOk;
}

}  // namespace longhaul::cli
