#include "agent/lib/slurm_runner.h"

#include <chrono>
#include <cmath>
#include <set>
#include <utility>

#include "core/command.h"
#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {
namespace {

constexpr int kMaxShowJobsPerReconcile = 8;
// How often the partitions' limits are read again: after a success, after a failure.
constexpr int64_t kPartitionsRefreshMs = 10 * 60'000;
constexpr int64_t kPartitionsRetryMs = 60'000;

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

// Unavailable when the command could not reach the controller (try again later), otherwise
// FailedPrecondition (Slurm answered no).
Status CommandFailed(const std::vector<std::string>& argv, const CommandResult& r) {
  std::string err = Trim(r.err.empty() ? r.out : r.err);
  std::string what =
      StrCat(CommandLine(argv), ": exit ", r.exit_code, err.empty() ? "" : ": ", err);
  if (SlurmUnreachable(err)) return absl::UnavailableError(what);
  return absl::FailedPreconditionError(what);
}

NativeState MakeState(const std::string& state, const std::string& reason,
                      const std::string& node) {
  NativeState s;
  // "CANCELLED by 0" in scontrol's JobState.
  s.state = state.substr(0, state.find(' '));
  s.phase = SlurmPhase(s.state);
  s.reason = reason == "None" || reason == "(null)" ? "" : reason;
  s.node = node == "(null)" || node == "None" ? "" : node;
  return s;
}

}  // namespace

std::string SlurmJobName(int64_t attempt_id) { return StrCat("lh-", attempt_id); }

NativePhase SlurmPhase(const std::string& state) {
  static const std::set<std::string> pending = {"PENDING",      "CONFIGURING", "REQUEUED",
                                                "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD",
                                                "SUSPENDED"};
  static const std::set<std::string> running = {"RUNNING",   "COMPLETING", "SIGNALING",
                                                "STAGE_OUT", "RESIZING",   "STOPPED"};
  static const std::set<std::string> ended = {
      "COMPLETED", "FAILED",   "CANCELLED",     "TIMEOUT",      "PREEMPTED", "NODE_FAIL",
      "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED"};
  if (pending.count(state)) return NativePhase::kPending;
  if (running.count(state)) return NativePhase::kRunning;
  if (ended.count(state)) return NativePhase::kEnded;
  return NativePhase::kUnknown;
}

std::map<std::string, NativeState> ParseSqueue(const std::string& text) {
  std::map<std::string, NativeState> out;
  for (const auto& raw : StrSplit(text, '\n')) {
    std::string line = Trim(raw);
    auto parts = StrSplit(line, '|');
    if (parts.size() < 3 || parts[0].empty()) continue;
    out[parts[0]] = MakeState(parts[1], parts[2], parts.size() > 3 ? parts[3] : "");
  }
  return out;
}

bool SlurmUnreachable(const std::string& err) {
  // What 22.05's commands print when slurmctld is down, restarting or overloaded (errno
  // texts of slurm_strerror), and a signal from our own deadline.
  static const char* const kTransient[] = {"Unable to contact slurm controller",
                                           "Socket timed out",
                                           "Connection refused",
                                           "connection failure",
                                           "Zero Bytes were transmitted or received",
                                           "Slurm backup controller in standby mode",
                                           "Resource temporarily unavailable",
                                           "Communication connection failure"};
  for (const char* t : kTransient) {
    if (err.find(t) != std::string::npos) return true;
  }
  return false;
}

std::map<std::string, NativeState> ParseSacct(const std::string& text) {
  std::map<std::string, NativeState> out;
  for (const auto& raw : StrSplit(text, '\n')) {
    auto parts = StrSplit(Trim(raw), '|');
    if (parts.size() < 4 || parts[0].empty()) continue;
    // "None assigned" is the node list of a job that never ran.
    std::string node = parts[2] == "None assigned" ? "" : parts[2];
    out[parts[0]] = MakeState(parts[1], parts[3], node);
  }
  return out;
}

bool SacctAccountingOff(const std::string& err) {
  return err.find("accounting storage is disabled") != std::string::npos;
}

Result<std::string> ParseSbatch(const std::string& text) {
  std::string id = Trim(text.substr(0, text.find(';')));
  if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos) {
    return absl::InternalError(
        StrCat("sbatch --parsable answered '", Trim(text), "', not a job id"));
  }
  return id;
}

std::string SlurmRunner::BatchScript(const RunRequest& req, bool slurm_gpus) {
  std::string s = StrCat("#!/bin/sh\n# longhaul attempt ", req.attempt_id,
                         ": the shim runs the stage (docs/slurm.md).\n",
                         "exec /usr/bin/env -i \"SLURM_JOB_ID=$SLURM_JOB_ID\" \\\n");
  static constexpr std::string_view kCvd = "CUDA_VISIBLE_DEVICES=";
  static constexpr std::string_view kAdvertise = "LONGHAUL_ADVERTISE_HOST=";
  bool advertise = false;
  for (const auto& kv : req.shim.env) {
    std::string_view v(kv);
    if (slurm_gpus && v.substr(0, kCvd.size()) == kCvd) continue;
    if (v.substr(0, kAdvertise.size()) == kAdvertise) {
      advertise = true;
      continue;
    }
    s += StrCat("  ", ShellQuote(kv), " \\\n");
  }
  // The agent advertises an address (--advertise-host), but the job runs on a compute node:
  // its services are reached at that node's name.
  if (advertise) s += "  \"LONGHAUL_ADVERTISE_HOST=$(hostname)\" \\\n";
  // Slurm's own choice of devices, when it set one (${VAR+word}: nothing when unset).
  if (slurm_gpus) {
    s += "  ${CUDA_VISIBLE_DEVICES+\"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"} \\\n";
  }
  s += StrCat("  ", ShellQuote(req.shim.program));
  for (const auto& a : req.shim.args) s += StrCat(" ", ShellQuote(a));
  return s + "\n";
}

std::vector<std::string> SlurmRunner::SbatchArgs(const RunRequest& req) const {
  std::vector<std::string> a = {"sbatch",
                                "--parsable",
                                StrCat("--job-name=", SlurmJobName(req.attempt_id)),
                                "--no-requeue",
                                StrCat("--signal=B:USR1@", options_.signal_lead_s),
                                StrCat("--chdir=", req.attempt_dir),
                                StrCat("--output=", req.attempt_dir, "/slurm.log"),
                                "--open-mode=append"};
  const std::string partition = PartitionOf(req);
  int cpus = std::max(1, static_cast<int>(std::ceil(req.resources.cpus())));
  a.push_back(StrCat("--cpus-per-task=", cpus));
  if (req.resources.memory_bytes() > 0) {
    a.push_back(StrCat("--mem=", (req.resources.memory_bytes() + (1 << 20) - 1) >> 20, "M"));
  }
  if (req.timeout_ms > 0) {
    // Slurm's limit is a backstop behind longhaul's own timeout: the stage's limit, its grace
    // and the USR1 lead, in whole minutes.
    int64_t s = (req.timeout_ms + req.grace_ms) / 1000 + options_.signal_lead_s;
    int64_t minutes = (s + 59) / 60;
    // Over the partition's MaxTime the job would stay PENDING (PartitionTimeLimit) for ever:
    // run it up to the limit instead (it ends `timeout` there and resumes from a checkpoint).
    std::optional<int64_t> cap;
    {
      std::lock_guard<std::mutex> lock(partitions_mu_);
      cap = partitions_.MaxMinutes(partition);
    }
    if (cap && *cap > 0 && minutes > *cap) minutes = *cap;
    a.push_back(StrCat("--time=", minutes));
  }
  if (!partition.empty()) a.push_back(StrCat("--partition=", partition));
  if (auto qos = options_.class_qos.find(req.priority); qos != options_.class_qos.end()) {
    a.push_back(StrCat("--qos=", qos->second));
  }
  if (!options_.account.empty()) a.push_back(StrCat("--account=", options_.account));
  if (options_.gres_gpus && req.resources.gpus() > 0) {
    a.push_back(StrCat("--gres=gpu:", req.resources.gpus()));
  }
  if (!req.exclude_nodes.empty()) {
    a.push_back(StrCat("--exclude=", StrJoin(req.exclude_nodes, ",")));
  }
  a.insert(a.end(), options_.extra_args.begin(), options_.extra_args.end());
  a.push_back(req.attempt_dir + "/job.sh");
  return a;
}

std::string SlurmRunner::PartitionOf(const RunRequest& req) const {
  auto it = options_.class_partition.find(req.priority);
  return it != options_.class_partition.end() ? it->second : options_.partition;
}

void SlurmRunner::RefreshPartitions() {
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
  {
    std::lock_guard<std::mutex> lock(partitions_mu_);
    if (partitions_next_ms_ != 0 && now < partitions_next_ms_) return;
    partitions_next_ms_ = now + kPartitionsRetryMs;  // unless it works
  }
  std::vector<std::string> argv = {"scontrol", "-o", "show", "partition"};
  auto r = RunCommand(argv, options_.command_timeout_ms);
  if (!r.ok() || r->exit_code != 0) return;  // no cap known until it works
  SlurmPartitions parsed = ParsePartitions(r->out);
  std::lock_guard<std::mutex> lock(partitions_mu_);
  partitions_ = std::move(parsed);
  partitions_next_ms_ = now + kPartitionsRefreshMs;
}

Result<Started> SlurmRunner::Start(const RunRequest& req) {
  if (req.timeout_ms > 0) RefreshPartitions();
  std::string script = req.attempt_dir + "/job.sh";
  RETURN_IF_ERROR(
      WriteFileAtomic(script, BatchScript(req, options_.gres_gpus && req.resources.gpus() > 0)));
  auto argv = SbatchArgs(req);
  auto r = RunCommand(argv, options_.command_timeout_ms);
  if (!r.ok()) return r.status();  // DeadlineExceeded: maybe submitted; the caller Finds
  if (r->exit_code != 0) return CommandFailed(argv, *r);
  auto id = ParseSbatch(r->out);
  if (!id.ok()) return id.status();
  RETURN_IF_ERROR(WriteFileAtomic(req.attempt_dir + "/job_id", *id + "\n"));
  return Started{*id, 0};
}

std::string JobInDir(const std::string& text, const std::string& dir) {
  for (const auto& raw : StrSplit(text, '\n')) {
    std::string line = Trim(raw);
    size_t bar = line.find('|');
    if (bar != std::string::npos && bar > 0 && line.substr(bar + 1) == dir) {
      return line.substr(0, bar);
    }
  }
  return "";
}

Result<std::string> SlurmRunner::Find(int64_t attempt_id, const std::string& attempt_dir) {
  std::vector<std::string> argv = {"squeue", "--me", "-h",
                                   "-t",     "all",  StrCat("--name=", SlurmJobName(attempt_id)),
                                   "-o",     "%i|%Z"};
  auto r = RunCommand(argv, options_.command_timeout_ms);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) return CommandFailed(argv, *r);
  std::string id = JobInDir(r->out, attempt_dir);
  if (id.empty()) {
    return absl::NotFoundError(
        StrCat("no Slurm job named ", SlurmJobName(attempt_id), " in ", attempt_dir));
  }
  return id;
}

Status SlurmRunner::Cancel(const std::string& native_id, bool running) {
  return CancelMany({native_id}, running);
}

Status SlurmRunner::CancelMany(const std::vector<std::string>& native_ids, bool running) {
  constexpr size_t kPerCommand = 200;
  Status first;
  for (size_t i = 0; i < native_ids.size(); i += kPerCommand) {
    std::vector<std::string> argv = {"scancel"};
    if (running) argv.insert(argv.end(), {"--batch", "--signal=USR1"});
    size_t end = std::min(native_ids.size(), i + kPerCommand);
    argv.insert(argv.end(), native_ids.begin() + i, native_ids.begin() + end);
    // A job that ended meanwhile makes scancel complain and exit 1; the others are cancelled.
    auto r = RunCommand(argv, options_.command_timeout_ms);
    Status s = !r.ok() ? r.status() : r->exit_code != 0 ? CommandFailed(argv, *r) : OkStatus();
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Result<NativeState> SlurmRunner::ShowJob(const std::string& id) {
  std::vector<std::string> argv = {"scontrol", "-o", "show", "job", id};
  auto r = RunCommand(argv, options_.command_timeout_ms);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    if (r->err.find("Invalid job id") != std::string::npos) {
      return NativeState{NativePhase::kGone, "", "", ""};
    }
    return CommandFailed(argv, *r);
  }
  std::string state = ScontrolField(r->out, "JobState");
  if (state.empty()) return absl::InternalError(StrCat(CommandLine(argv), ": no JobState"));
  return MakeState(state, ScontrolField(r->out, "Reason"), ScontrolField(r->out, "NodeList"));
}

Result<std::map<std::string, NativeState>> SlurmRunner::Sacct(const std::vector<std::string>& ids) {
  std::vector<std::string> argv = {
      "sacct", "-n", "-P", "-X", "-j", StrJoin(ids, ","), "-o", "JobID,State,NodeList,Reason"};
  auto r = RunCommand(argv, options_.command_timeout_ms);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    if (SacctAccountingOff(r->err + r->out)) {
      accounting_off_ = true;
      return absl::FailedPreconditionError(StrCat(CommandLine(argv), ": accounting is off"));
    }
    return CommandFailed(argv, *r);
  }
  return ParseSacct(r->out);
}

Result<std::map<std::string, NativeState>> SlurmRunner::Reconcile(
    const std::vector<std::string>& native_ids) {
  std::map<std::string, NativeState> out;
  if (native_ids.empty()) return out;
  std::vector<std::string> argv = {"squeue", "--me", "-h", "-t", "all", "-o", "%i|%T|%r|%N"};
  auto r = RunCommand(argv, options_.command_timeout_ms);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) return CommandFailed(argv, *r);
  auto listed = ParseSqueue(r->out);
  std::vector<std::string> gone;  // ended long enough ago for squeue to drop them
  for (const auto& id : native_ids) {
    auto it = listed.find(id);
    if (it != listed.end()) {
      out[id] = it->second;
    } else {
      gone.push_back(id);
    }
  }
  if (gone.empty()) return out;
  // One sacct for all of them, where the cluster keeps accounting.
  if (!accounting_off_) {
    auto acct = Sacct(gone);
    if (acct.ok()) {
      std::vector<std::string> left;
      for (const auto& id : gone) {
        auto it = acct->find(id);
        if (it != acct->end() && it->second.phase != NativePhase::kUnknown) {
          out[id] = it->second;
        } else {
          left.push_back(id);  // not (yet) in the database
        }
      }
      gone = std::move(left);
    }
  }
  // scontrol knows a job until MinJobAge: a few per call, so that an empty squeue answer
  // cannot turn into a storm of scontrols. The others are unknown this time.
  int shows_left = kMaxShowJobsPerReconcile;
  for (const auto& id : gone) {
    if (shows_left-- <= 0) break;
    auto shown = ShowJob(id);
    if (shown.ok()) out[id] = *shown;
  }
  return out;
}

}  // namespace longhaul::agent
