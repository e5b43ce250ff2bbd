#include "agent/lib/attempt_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/strings.h"
#include "google/protobuf/util/json_util.h"

namespace longhaul::agent {
namespace {

using nlohmann::json;

Result<json> ReadJsonFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return absl::InvalidArgumentError(StrCat(path, ": not a JSON object"));
  }
  return doc;
}

template <typename T>
Result<T> Field(const json& doc, const char* key, const std::string& path) {
  auto it = doc.find(key);
  if (it == doc.end()) return absl::InvalidArgumentError(StrCat(path, ": missing '", key, "'"));
  try {
    return it->get<T>();
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(StrCat(path, ": '", key, "': ", e.what()));
  }
}

// An attempt dir's files are written atomically (temp file + rename) but not fsynced: every
// one can be lost in a crash of the node without harm (docs/architecture.md, "Durability of
// the agent's files").
constexpr Durability kAttemptFileDurability = Durability::kRenameOnly;

std::string Dump(const json& doc) {
  return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace

AttemptDir::AttemptDir(const std::string& state_dir, int64_t attempt_id)
    : path_(StrCat(state_dir, "/attempts/", attempt_id)) {}

bool AttemptDir::Exists() const { return PathExists(path_); }
bool AttemptDir::IsDone() const { return PathExists(File("done")); }
Status AttemptDir::MarkDone() const {
  // A second name for exit.json: a directory entry, no new inode (creating one is the costly
  // part of a file on some file systems). Only its existence means anything.
  std::string done = File("done");
  if (::link(File("exit.json").c_str(), done.c_str()) == 0 || errno == EEXIST) return OkStatus();
  // No exit.json (the agent could not write it): an empty file, which cannot be torn.
  int fd = ::open(done.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create", done, errno);
  ::close(fd);
  return OkStatus();
}

Status AttemptDir::WriteSpec(const v1::StartAttempt& spec) const {
  std::string text;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  auto st = google::protobuf::util::MessageToJsonString(spec, &text, opts);
  if (!st.ok()) return absl::InternalError(StrCat("spec.json: ", st.ToString()));
  // Not fsynced: after a crash of the node (which ends the stage anyway) the attempt is
  // reported as never started, or not at all, and then the coordinator sends it again.
  return WriteFileAtomic(File("spec.json"), text + "\n", kAttemptFileDurability);
}

Result<v1::StartAttempt> AttemptDir::ReadSpec() const {
  ASSIGN_OR_RETURN(std::string text, ReadFile(File("spec.json")));
  v1::StartAttempt spec;
  auto st = google::protobuf::util::JsonStringToMessage(text, &spec);
  if (!st.ok()) {
    return absl::InvalidArgumentError(StrCat(File("spec.json"), ": ", st.ToString()));
  }
  return spec;
}

Result<PidInfo> AttemptDir::ReadPid() const {
  std::string path = File("pid.json");
  ASSIGN_OR_RETURN(json doc, ReadJsonFile(path));
  PidInfo p;
  ASSIGN_OR_RETURN(p.shim_pid, Field<pid_t>(doc, "shim_pid", path));
  ASSIGN_OR_RETURN(p.shim_start, Field<int64_t>(doc, "shim_start", path));
  ASSIGN_OR_RETURN(p.stage_pid, Field<pid_t>(doc, "stage_pid", path));
  ASSIGN_OR_RETURN(p.stage_start, Field<int64_t>(doc, "stage_start", path));
  ASSIGN_OR_RETURN(p.started_at_ms, Field<int64_t>(doc, "started_at_ms", path));
  if (auto c = doc.find("cgroup"); c != doc.end() && c->is_string()) p.cgroup = *c;
  if (p.shim_pid <= 0 || p.stage_pid <= 0) {
    return absl::InvalidArgumentError(StrCat(path, ": pids must be positive"));
  }
  return p;
}

Result<ExitInfo> AttemptDir::ReadExit() const {
  std::string path = File("exit.json");
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) return text.status();
    return absl::DataLossError(StrCat("exit.json unreadable: ", text.status().message()));
  }
  if (text->find_first_not_of(" \n") == std::string::npos) {
    // What a shim that could not write it on a full disk may leave (docs/agent.md).
    return absl::DataLossError("exit.json empty (disk full?)");
  }
  json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return absl::InvalidArgumentError(StrCat(path, ": not a JSON object"));
  }
  ExitInfo e;
  ASSIGN_OR_RETURN(e.exit_code, Field<int>(doc, "exit_code", path));
  ASSIGN_OR_RETURN(e.signal, Field<int>(doc, "signal", path));
  ASSIGN_OR_RETURN(e.ended_at_ms, Field<int64_t>(doc, "ended_at_ms", path));
  ASSIGN_OR_RETURN(e.reason, Field<std::string>(doc, "reason", path));
  ASSIGN_OR_RETURN(e.start_failed, Field<bool>(doc, "start_failed", path));
  // Optional: written by the agent for attempts a polled executor ended (native_outcome.h).
  if (auto k = doc.find("failure_kind"); k != doc.end() && k->is_string()) {
    e.failure_kind = k->get<std::string>();
  }
  if (auto n = doc.find("node"); n != doc.end() && n->is_string()) e.node = n->get<std::string>();
  // Optional: written by the shim when it had to kill leftovers (agent/shim/leftovers.h).
  if (auto k = doc.find("leftovers_killed"); k != doc.end() && k->is_number_integer()) {
    e.leftovers_killed = k->get<int>();
  }
  return e;
}

Status AttemptDir::WriteExit(const ExitInfo& e) const {
  json doc{{"exit_code", e.exit_code},
           {"signal", e.signal},
           {"ended_at_ms", e.ended_at_ms},
           {"reason", e.reason},
           {"start_failed", e.start_failed}};
  if (!e.failure_kind.empty()) doc["failure_kind"] = e.failure_kind;
  if (!e.node.empty()) doc["node"] = e.node;
  if (e.leftovers_killed > 0) doc["leftovers_killed"] = e.leftovers_killed;
  return WriteFileAtomic(File("exit.json"), Dump(doc), kAttemptFileDurability);
}

Result<std::string> AttemptDir::ReadJobId() const {
  ASSIGN_OR_RETURN(std::string text, ReadFile(File("job_id")));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return absl::InvalidArgumentError(StrCat(File("job_id"), ": empty"));
  return text;
}

Status AttemptDir::WriteCancel(const CancelInfo& c) const {
  return WriteFileAtomic(File("cancel.json"),
                         Dump(json{{"reason", c.reason}, {"grace_ms", c.grace_ms}}),
                         kAttemptFileDurability);
}

Status AttemptDir::AppendControl(const std::string& line) const {
  std::string path = control_path();
  std::string data = line + "\n";
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open", path, errno);
  ssize_t n = ::write(fd, data.data(), data.size());
  int err = errno;
  ::close(fd);
  if (n < 0) return ErrnoStatus("write", path, err);
  if (static_cast<size_t>(n) != data.size()) {
    return absl::ResourceExhaustedError(StrCat(path, ": short write"));
  }
  return OkStatus();
}

Result<AckHint> AttemptDir::ReadAckHint() const {
  std::string path = File("acked.json");
  ASSIGN_OR_RETURN(json doc, ReadJsonFile(path));
  AckHint h;
  ASSIGN_OR_RETURN(h.seq, Field<int64_t>(doc, "seq", path));
  ASSIGN_OR_RETURN(h.offset, Field<int64_t>(doc, "offset", path));
  if (h.seq < 0 || h.offset < 0) return absl::InvalidArgumentError(StrCat(path, ": negative"));
  return h;
}

Status AttemptDir::WriteAckHint(const AckHint& h) const {
  // A lost hint only means re-sending a few acknowledged events.
  return WriteFileAtomic(File("acked.json"), Dump(json{{"seq", h.seq}, {"offset", h.offset}}),
                         kAttemptFileDurability);
}

Result<int64_t> ProcessStartTime(pid_t pid) {
  if (pid <= 0) return absl::NotFoundError(StrCat("no process ", pid));
  auto stat = ReadFile(StrCat("/proc/", pid, "/stat"));
  if (!stat.ok()) return absl::NotFoundError(StrCat("no process ", pid));
  // Field 2 (the command) may hold spaces and ')'; the fields resume after the last ')'.
  size_t pos = stat->rfind(')');
  if (pos == std::string::npos) return absl::InternalError(StrCat("/proc/", pid, "/stat: odd"));
  std::vector<std::string> fields = StrSplit(std::string_view(*stat).substr(pos + 2), ' ');
  // fields[0] is field 3 (state), so field 22 is fields[19].
  if (fields.size() < 20) return absl::InternalError(StrCat("/proc/", pid, "/stat: short"));
  if (fields[0] == "Z" || fields[0] == "X") return absl::NotFoundError(StrCat("zombie ", pid));
  return std::stoll(fields[19]);
}

bool ProcessMatches(pid_t pid, int64_t start) {
  auto actual = ProcessStartTime(pid);
  return actual.ok() && *actual == start;
}

}  // namespace longhaul::agent
