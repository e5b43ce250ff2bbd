#include "cli/provenance_view.h"

#include <map>
#include <set>

#include "cli/table.h"
#include "cli/terminal_text.h"
#include "core/strings.h"

namespace longhaul::cli {
namespace {

std::string ShortHash(const std::string& sha) { return sha.empty() ? "-" : sha.substr(0, 12); }

std::string DiffText(const v1::SourceState& s) {
  if (!s.dirty()) return "clean";
  return StrCat("dirty, diff ", ShortHash(s.diff_sha256()));
}

void AddIfDifferent(std::vector<ProvenanceDifference>& out, std::string what, std::string a,
                    std::string b) {
  if (a != b) out.push_back({std::move(what), std::move(a), std::move(b)});
}

}  // namespace

const v1::AttemptEnvironment* LastEnvironment(const v1::Stage& stage) {
  for (int i = stage.attempts_size() - 1; i >= 0; --i) {
    if (stage.attempts(i).has_environment()) return &stage.attempts(i).environment();
  }
  return nullptr;
}

void RenderEnvironmentTable(std::ostream& out, const v1::Run& run) {
  Table table({"STAGE", "ATTEMPT", "EXECUTABLE", "SHA256", "ENGINE", "AGENT"});
  std::vector<std::string> notes;
  for (const v1::Stage& s : run.stages()) {
    for (int i = s.attempts_size() - 1; i >= 0; --i) {
      const v1::Attempt& a = s.attempts(i);
      if (!a.has_environment()) continue;
      const v1::AttemptEnvironment& e = a.environment();
      std::string engine = e.engine_profile().empty()
                               ? "-"
                               : StrCat(e.engine_profile(), " ",
                                        e.engine_version().empty() ? "?" : e.engine_version());
      table.AddRow({s.name(), std::to_string(a.number()),
                    e.executable_path().empty() ? e.executable() : e.executable_path(),
                    ShortHash(e.executable_sha256()), engine, e.agent_version()});
      for (const std::string& n : e.notes()) notes.push_back(StrCat(s.name(), ": ", n));
      break;  // the last attempt that recorded one
    }
  }
  if (table.rows() == 0) return;
  out << "\nenvironment (each stage's last attempt):\n";
  table.Render(out);
  for (const std::string& n : notes) out << "  note: " << TerminalSafe(n) << '\n';
}

std::vector<ProvenanceDifference> ProvenanceDifferences(const v1::Run& a, const v1::Run& b) {
  std::vector<ProvenanceDifference> out;
  const v1::SourceState& sa = a.source();
  const v1::SourceState& sb = b.source();
  if (sa.kind() == "git" && sb.kind() == "git") {
    AddIfDifferent(out, "source commit", ShortHash(sa.commit()), ShortHash(sb.commit()));
    AddIfDifferent(out, "source branch", sa.branch().empty() ? "(detached)" : sa.branch(),
                   sb.branch().empty() ? "(detached)" : sb.branch());
    AddIfDifferent(out, "uncommitted changes", DiffText(sa), DiffText(sb));
  } else if (sa.kind() != sb.kind()) {
    AddIfDifferent(out, "source", sa.kind().empty() ? "not recorded" : sa.kind(),
                   sb.kind().empty() ? "not recorded" : sb.kind());
  }
  std::map<std::string, const v1::AttemptEnvironment*> envs[2];
  std::vector<std::string> order;
  std::set<std::string> agents[2];
  for (int i = 0; i < 2; ++i) {
    for (const v1::Stage& s : (i == 0 ? a : b).stages()) {
      const v1::AttemptEnvironment* e = LastEnvironment(s);
      if (e == nullptr) continue;
      if (!envs[0].count(s.name()) && !envs[1].count(s.name())) order.push_back(s.name());
      envs[i][s.name()] = e;
      for (const v1::Attempt& at : s.attempts()) {
        if (at.has_environment() && !at.environment().agent_version().empty()) {
          agents[i].insert(at.environment().agent_version());
        }
      }
    }
  }
  for (const std::string& stage : order) {
    auto ia = envs[0].find(stage), ib = envs[1].find(stage);
    if (ia == envs[0].end() || ib == envs[1].end()) continue;
    const v1::AttemptEnvironment& ea = *ia->second;
    const v1::AttemptEnvironment& eb = *ib->second;
    if (!ea.engine_profile().empty() || !eb.engine_profile().empty()) {
      AddIfDifferent(out, StrCat("engine version (", stage, ")"),
                     StrCat(ea.engine_profile(), " ", ea.engine_version()),
                     StrCat(eb.engine_profile(), " ", eb.engine_version()));
    }
    AddIfDifferent(out, StrCat("executable ", ea.executable(), " (", stage, ")"),
                   ShortHash(ea.executable_sha256()), ShortHash(eb.executable_sha256()));
  }
  if (!agents[0].empty() && !agents[1].empty()) {
    AddIfDifferent(out, "agent version",
                   StrJoin(std::vector<std::string>(agents[0].begin(), agents[0].end()), ", "),
                   StrJoin(std::vector<std::string>(agents[1].begin(), agents[1].end()), ", "));
  }
  return out;
}

}  // namespace longhaul::cli
