#include "stages/command/command_runner.h"

#include <signal.h>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/fs.h"
#include "core/strings.h"
#include "stages/command/checkpoint_watcher.h"
#include "stages/command/config_file.h"
#include "stages/common/group_process.h"
#include "stages/common/line_splitter.h"

namespace longhaul::command {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

constexpr char kCheckpointVar[] = "{checkpoint}";
constexpr char kConfigVar[] = "{config}";
// After the command has ended and its group is killed, how long output may still drain.
constexpr auto kDrain = std::chrono::seconds(3);

std::string Resolve(const std::string& out, const std::string& path) {
  if (path.empty() || path.front() == '/' || out.empty() || out == ".") return path;
  return out + "/" + path;
}

std::string Clean(std::string path) {
  while (StartsWith(path, "./")) path = path.substr(2);
  return path;
}

std::string Quote(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;") == std::string::npos;
    out += plain ? a : StrCat("'", a, "'");
  }
  return out;
}

// What an expected output holds: bytes of a file, or of every file under a directory; nullopt
// when it does not exist.
std::optional<uint64_t> Bytes(const std::string& path, bool* empty) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return std::nullopt;
  uint64_t bytes = 0;
  if (fs::is_directory(st)) {
    *empty = fs::is_empty(path, ec);
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec)) bytes += it->file_size(ec);
    }
    return bytes;
  }
  bytes = fs::file_size(path, ec);
  *empty = bytes == 0;
  return bytes;
}

class Supervisor {
 public:
  Supervisor(asio::io_context& io, const CommandOptions& o, EventWriter& events, std::ostream& log,
             const Clock* clock, OutputScanner scanner)
      : io_(io),
        o_(o),
        events_(events),
        log_(log),
        clock_(clock),
        scanner_(std::move(scanner)),
        watcher_(o.out, o.checkpoint_glob),
        signals_(io, SIGTERM, SIGINT, SIGUSR1),
        tick_(io),
        grace_(io),
        drain_(io) {}

  int Run() {
    if (!o_.config_file.empty()) {
      Status s = WriteConfig();
      if (!s.ok()) {
        std::string msg = StrCat("--config-file ", ConfigPath(o_), ": ", s.message());
        Log(msg);
        events_.Message("error", msg);
        return kExitNotStarted;
      }
    }
    std::string note;
    std::optional<std::string> newest = watcher_.Newest();
    std::vector<std::string> argv = CommandArgv(o_, newest.value_or(""), &note);
    if (!note.empty()) Log(note);
    started_ms_ = clock_->NowMs();
    stages::GroupProcess::Options po;
    po.argv = argv;
    stages::GroupProcess::Handlers h;
    h.on_output = [this](bool is_err, std::string_view b) { OnOutput(is_err, b); };
    h.on_output_end = [this](bool, bool all) {
      if (all) OnEof();
    };
    h.on_exit = [this](int code, int sig) { OnExit(code, sig); };
    auto proc = stages::GroupProcess::Start(io_, std::move(po), std::move(h));
    if (!proc.ok()) {
      std::string msg = StrCat("could not start the command: ", proc.status().message());
      Log(msg);
      events_.Message("error", msg);
      return kExitNotStarted;
    }
    proc_ = std::move(*proc);
    Log(StrCat("started pid ", proc_->pid(), ": ", Quote(argv)));
    WaitSignal();
    ArmTick();
    io_.run();
    return rc_;
  }

 private:
  void Log(const std::string& line) { log_ << "[" << o_.stage << "] " << line << std::endl; }

  Status WriteConfig() {
    ASSIGN_OR_RETURN(std::string yaml, RenderConfigYaml(o_.config_sets));
    std::string path = ConfigPath(o_);
    std::string dir = fs::path(path).parent_path().string();
    if (!dir.empty()) RETURN_IF_ERROR(MakeDirs(dir));
    RETURN_IF_ERROR(WriteFileAtomic(path, yaml));
    Log(StrCat("wrote ", path, " (", o_.config_sets.size(), " settings)"));
    return OkStatus();
  }

  void OnOutput(bool is_err, std::string_view bytes) {
    // Echoed unchanged (carriage returns included), so the stage's logs read like the
    // command's own.
    std::FILE* f = is_err ? stderr : stdout;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fflush(f);
    auto on_line = [this, is_err](std::string_view line) {
      if (is_err && !StripWhitespace(line).empty())
        last_err_line_ = std::string(line.substr(0, 300));
      scanner_.ScanLine(line, events_);
    };
    (is_err ? err_lines_ : out_lines_).Feed(bytes, on_line);
  }

  void WaitSignal() {
    signals_.async_wait([this](boost::system::error_code ec, int sig) {
      if (ec) return;
      OnSignal(sig);
      WaitSignal();
    });
  }

  void OnSignal(int sig) {
    if (sig == SIGUSR1) {
      // longhaul's notice before a stop (preempt_notice, docs/stage-protocol.md): the command
      // is asked to checkpoint; the checkpoint it writes is reported as it appears.
      if (exited_) return;
      Log("got SIGUSR1 (a notice before a stop): sending it to the command's process group");
      proc_->SignalGroup(SIGUSR1);
      return;
    }
    if (stop_signal_ != 0 || exited_) return;  // a second signal does not shorten the grace
    stop_signal_ = sig;
    Log(StrCat("got ", strsignal(sig), ": sending it to the command's process group; SIGKILL in ",
               o_.grace_ms, " ms"));
    proc_->SignalGroup(sig);
    grace_.expires_after(std::chrono::milliseconds(o_.grace_ms));
    grace_.async_wait([this](boost::system::error_code ec) {
      if (ec || !proc_->GroupAlive()) return;
      Log("grace period over: SIGKILL to the command's process group");
      proc_->SignalGroup(SIGKILL);
    });
  }

  void ArmTick() {
    tick_.expires_after(std::chrono::milliseconds(o_.poll_ms));
    tick_.async_wait([this](boost::system::error_code ec) {
      if (ec || finished_) return;
      ReportCheckpoints(watcher_.Poll());
      scanner_.Flush(events_);
      ArmTick();
    });
  }

  void ReportCheckpoints(const std::vector<Checkpoint>& found) {
    for (const Checkpoint& c : found) {
      std::string path = Clean(c.path);
      events_.Checkpoint(path, c.step);
      Log(StrCat("checkpoint ", path));
    }
  }

  void OnExit(int code, int sig) {
    exited_ = true;
    exit_code_ = code;
    exit_signal_ = sig;
    // Workers the command left behind in its group would hold GPUs: the shim does the same for
    // the stage's own group.
    if (proc_->GroupAlive()) proc_->SignalGroup(SIGKILL);
    if (eof_) return Finish();
    drain_.expires_after(kDrain);
    drain_.async_wait([this](boost::system::error_code ec) {
      if (ec || finished_) return;
      Log("output still open after the command ended (a process outside its group holds it)");
      Finish();
    });
  }

  void OnEof() {
    eof_ = true;
    if (exited_) Finish();
  }

  void Finish() {
    if (finished_) return;
    finished_ = true;
    tick_.cancel();
    grace_.cancel();
    drain_.cancel();
    boost::system::error_code ignored;
    signals_.cancel(ignored);
    proc_->CloseOutput();
    auto on_line = [this](std::string_view line) { scanner_.ScanLine(line, events_); };
    out_lines_.Finish(on_line);
    err_lines_.Finish(on_line);
    scanner_.Flush(events_);
    ReportCheckpoints(watcher_.Final());
    events_.Metric("command_seconds", (clock_->NowMs() - started_ms_) / 1000.0);
    rc_ = ExitCode();
    events_.Metric("command_exit_code", rc_);
    io_.stop();
  }

  int ExitCode() {
    int code = exit_signal_ != 0 ? 128 + exit_signal_ : exit_code_;
    std::string tail =
        last_err_line_.empty() ? "" : StrCat(" (last stderr line: ", last_err_line_, ")");
    if (stop_signal_ != 0) {
      Log(StrCat("stopped: the command ended with ",
                 exit_signal_ ? StrCat("signal ", exit_signal_) : StrCat("code ", exit_code_)));
      return code != 0 ? code : 128 + stop_signal_;
    }
    if (code != 0) {
      std::string msg = exit_signal_ != 0
                            ? StrCat("the command was killed by signal ", exit_signal_, tail)
                            : StrCat("the command exited with code ", exit_code_, tail);
      Log(msg);
      events_.Message("error", msg);
      return code;
    }
    return Validate();
  }

  int Validate() {
    std::vector<std::string> problems;
    auto check = [&](const std::string& given) -> std::optional<uint64_t> {
      std::string path = Resolve(o_.out, given);
      bool empty = false;
      auto bytes = Bytes(path, &empty);
      if (!bytes) {
        problems.push_back(StrCat("expected output missing: ", path));
      } else if (empty) {
        problems.push_back(StrCat("expected output is empty: ", path));
      } else {
        return bytes;
      }
      return std::nullopt;
    };
    for (const std::string& f : o_.expect_files) check(f);
    std::vector<std::tuple<std::string, std::string, uint64_t>> outputs;
    for (const std::string& spec : o_.outputs) {
      size_t eq = spec.find('=');
      std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
      if (auto bytes = check(path)) outputs.emplace_back(name, Resolve(o_.out, path), *bytes);
    }
    if (!problems.empty()) {
      std::string msg = StrCat("the command exited 0 but ", StrJoin(problems, "; "));
      Log(msg);
      events_.Message("error", msg);
      return kExitValidationFailed;
    }
    for (const auto& [name, path, bytes] : outputs) {
      std::error_code ec;
      std::string abs = fs::absolute(path, ec).lexically_normal().string();
      if (ec) abs = path;
      events_.Artifact(name, abs, static_cast<int64_t>(bytes));
      events_.Output(name, abs);
    }
    Log("done");
    return 0;
  }

  asio::io_context& io_;
  const CommandOptions& o_;
  EventWriter& events_;
  std::ostream& log_;
  const Clock* clock_;
  OutputScanner scanner_;
  CheckpointWatcher watcher_;
  asio::signal_set signals_;
  asio::steady_timer tick_, grace_, drain_;
  std::unique_ptr<stages::GroupProcess> proc_;
  stages::LineSplitter out_lines_, err_lines_;
  std::string last_err_line_;
  int64_t started_ms_ = 0;
  bool exited_ = false, eof_ = false, finished_ = false;
  int exit_code_ = 0, exit_signal_ = 0, stop_signal_ = 0;
  int rc_ = 0;
};

}  // namespace

Status ValidateCommandOptions(const CommandOptions& o) {
  if (o.argv.empty()) {
    return absl::InvalidArgumentError(
        "--backend command needs the command after '--': -- CMD ARGS...");
  }
  SystemClock clock;
  RETURN_IF_ERROR(OutputScanner::Create(o.patterns, &clock).status());
  for (const std::string& spec : o.outputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return absl::InvalidArgumentError(StrCat("--output '", spec, "': expected NAME=PATH"));
    }
  }
  bool wants_ckpt =
      o.resume_with_checkpoint || o.resume_flag.find(kCheckpointVar) != std::string::npos;
  if (wants_ckpt && o.checkpoint_glob.empty()) {
    return absl::InvalidArgumentError(
        "--resume-with-checkpoint and {checkpoint} in --resume-flag need --checkpoint-glob");
  }
  bool uses_config = false;
  for (const std::string& a : o.argv) uses_config |= a.find(kConfigVar) != std::string::npos;
  if (o.config_file.empty() && (uses_config || !o.config_sets.empty())) {
    return absl::InvalidArgumentError(
        "--config-set and {config} in the command need --config-file");
  }
  if (!o.config_file.empty()) RETURN_IF_ERROR(RenderConfigYaml(o.config_sets).status());
  if (o.grace_ms < 0) return absl::InvalidArgumentError("--grace must not be negative");
  if (o.poll_ms < 10) return absl::InvalidArgumentError("--checkpoint-poll must be >= 10ms");
  return OkStatus();
}

std::string ConfigPath(const CommandOptions& o) {
  return o.config_file.empty() ? "" : Resolve(o.out, o.config_file);
}

std::vector<std::string> CommandArgv(const CommandOptions& o, const std::string& newest,
                                     std::string* note) {
  std::vector<std::string> argv = o.argv;
  if (!o.config_file.empty()) {
    for (std::string& a : argv) {
      for (size_t at = a.find(kConfigVar); at != std::string::npos; at = a.find(kConfigVar, at)) {
        a.replace(at, std::string(kConfigVar).size(), ConfigPath(o));
        at += ConfigPath(o).size();
      }
    }
  }
  note->clear();
  if (!o.resume) return argv;
  if (o.resume_flag.empty() && !o.resume_with_checkpoint) {
    *note = "resuming, but no --resume-flag was given: the command runs as on a first attempt";
    return argv;
  }
  size_t var = o.resume_flag.find(kCheckpointVar);
  bool wants_ckpt = o.resume_with_checkpoint || var != std::string::npos;
  std::string ckpt = Clean(newest);
  if (wants_ckpt && ckpt.empty()) {
    *note = StrCat("resuming, but nothing matches --checkpoint-glob '", o.checkpoint_glob, "' in ",
                   o.out, ": starting from the beginning");
    return argv;
  }
  std::vector<std::string> added;
  if (!o.resume_flag.empty()) {
    std::string flag = o.resume_flag;
    if (var != std::string::npos) flag.replace(var, std::string(kCheckpointVar).size(), ckpt);
    added.push_back(flag);
  }
  if (o.resume_with_checkpoint) added.push_back(ckpt);
  argv.insert(argv.end(), added.begin(), added.end());
  *note = StrCat("resuming: appended ", Quote(added),
                 ckpt.empty() ? "" : StrCat(" (newest checkpoint ", ckpt, ")"));
  return argv;
}

int RunCommandBackend(asio::io_context& io, const CommandOptions& o, EventWriter& events,
                      std::ostream& log, const Clock* clock) {
  Status s = ValidateCommandOptions(o);
  if (!s.ok()) {
    log << o.stage << ": " << s.message() << std::endl;
    events.Message("error", std::string(s.message()));
    return 2;
  }
  auto scanner = OutputScanner::Create(o.patterns, clock);
  Supervisor sup(io, o, events, log, clock, std::move(*scanner));
  return sup.Run();
}

}  // namespace longhaul::command
