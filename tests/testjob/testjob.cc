#include "tests/testjob/testjob.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/event_writer.h"
#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::testjob {
namespace {

std::string Env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

void SleepSeconds(double s) {
  if (s <= 0) return;
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

[[noreturn]] void SleepForever() {
  for (;;) ::pause();
}

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

bool AppendToFile(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = WriteAll(fd, data);
  ::close(fd);
  return ok;
}

// Fails loudly on stderr: lh-testjob is a test tool, a silent failure would mislead a test.
int Fail(const std::string& what) {
  std::fprintf(stderr, "lh-testjob: %s\n", what.c_str());
  return 2;
}

Status SpawnChildren(int n, const std::string& pid_dir) {
  std::string pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) return ErrnoStatus("fork child", std::to_string(i), errno);
    if (pid == 0) SleepForever();
    pids += StrCat(pid, "\n");
  }
  RETURN_IF_ERROR(MakeDirs(pid_dir));
  return WriteFileAtomic(pid_dir + "/children.pids", pids);
}

// Many lines per write(2): the ingest benchmark measures the agent and coordinator, not this.
Status WriteFastEvents(int64_t n) {
  std::string path = Env("LONGHAUL_EVENTS");
  if (path.empty()) return OkStatus();
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open events file", path, errno);
  std::string buf;
  for (int64_t i = 1; i <= n; ++i) {
    buf += StrCat(R"({"progress":{"done":)", i, R"(,"total":)", n, R"(,"unit":"items"}})", "\n");
    if (buf.size() >= (1 << 16) || i == n) {
      if (!WriteAll(fd, buf)) {
        int err = errno;
        ::close(fd);
        return ErrnoStatus("write events file", path, err);
      }
      buf.clear();
    }
  }
  ::close(fd);
  return OkStatus();
}

// Cuts `path` down to its first `n` lines (a missing file stays missing when n is 0).
Status KeepFirstLines(const std::string& path, int64_t n) {
  auto text = ReadFile(path);
  if (!text.ok()) return absl::IsNotFound(text.status()) ? OkStatus() : text.status();
  size_t end = 0;
  for (int64_t i = 0; i < n && end < text->size(); ++i) {
    size_t nl = text->find('\n', end);
    end = nl == std::string::npos ? text->size() : nl + 1;
  }
  if (end == text->size()) return OkStatus();
  std::fprintf(stderr, "lh-testjob: dropping %zu bytes of done.txt past the checkpoint\n",
               text->size() - end);
  return WriteFileAtomic(path, text->substr(0, end));
}

// Set by SIGUSR1 with --checkpoint-on-usr1; DoWork checkpoints after the item in hand.
volatile sig_atomic_t testjob_noticed = 0;

void OnTestJobNotice(int) { testjob_noticed = 1; }

Status DoWork(const TestJobOptions& o, EventWriter& events) {
  std::string out_dir = Env("LONGHAUL_OUTPUT_DIR", ".");
  RETURN_IF_ERROR(MakeDirs(out_dir));
  const std::string ckpt_rel = "checkpoint.txt";
  int64_t start = 0;
  if (Env("LONGHAUL_RESUME") == "1") {
    std::string ckpt = Env("LONGHAUL_CHECKPOINT", ckpt_rel);
    if (ckpt[0] != '/') ckpt = out_dir + "/" + ckpt;
    auto text = ReadFile(ckpt);
    if (text.ok()) {
      start = std::strtoll(text->c_str(), nullptr, 10);
      std::fprintf(stderr, "lh-testjob: resuming after item %lld\n", static_cast<long long>(start));
    } else {
      std::fprintf(stderr, "lh-testjob: no checkpoint (%s); starting from the first item\n",
                   ToStd(text.status().message()).c_str());
    }
  }
  if (Env("LONGHAUL_RESUME") == "1") {
    // The checkpoint is the truth: an item appended after it (killed before its checkpoint
    // was written) is dropped and done again, so done.txt never holds an item twice.
    RETURN_IF_ERROR(KeepFirstLines(out_dir + "/done.txt", start));
  }
  for (int64_t i = start + 1; i <= o.work; ++i) {
    SleepSeconds(o.step_ms / 1000.0);
    if (!AppendToFile(out_dir + "/done.txt", StrCat(i, "\n"))) {
      return ErrnoStatus("append to", out_dir + "/done.txt", errno);
    }
    bool noticed = testjob_noticed != 0;
    if (noticed) {
      testjob_noticed = 0;
      std::fprintf(stderr, "lh-testjob: checkpoint on notice after item %lld\n",
                   static_cast<long long>(i));
    }
    if (noticed || i % o.checkpoint_every == 0 || i == o.work) {
      RETURN_IF_ERROR(WriteFileAtomic(out_dir + "/" + ckpt_rel, StrCat(i, "\n")));
      events.Checkpoint(ckpt_rel, i);
    }
    events.Progress(static_cast<double>(i), static_cast<double>(o.work), "items");
  }
  return OkStatus();
}

}  // namespace

int RunTestJob(const TestJobOptions& o) {
  if (!o.pid_file.empty()) {
    Status s = WriteFileAtomic(o.pid_file, StrCat(::getpid(), "\n"));
    if (!s.ok()) return Fail(ToStd(s.message()));
  }
  if (o.spawn_children > 0) {
    std::string dir = o.pid_dir.empty() ? Env("LONGHAUL_WORK_DIR", ".") : o.pid_dir;
    Status s = SpawnChildren(o.spawn_children, dir);
    if (!s.ok()) return Fail(ToStd(s.message()));
  }
  if (o.ignore_sigterm) ::signal(SIGTERM, SIG_IGN);
  if (o.checkpoint_on_usr1) ::signal(SIGUSR1, OnTestJobNotice);
  for (const auto& line : o.print) std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  for (const auto& line : o.stderr_lines) std::fprintf(stderr, "%s\n", line.c_str());

  int attempt = std::atoi(Env("LONGHAUL_ATTEMPT", "1").c_str());
  if (attempt <= o.fail_first) {
    std::fprintf(stderr, "lh-testjob: failing attempt %d (--fail-first %d)\n", attempt,
                 o.fail_first);
    return o.exit_code != 0 ? o.exit_code : 1;
  }

  EventWriter events = EventWriter::FromEnv();
  for (const auto& [name, value] : o.outputs) events.Output(name, value);
  for (const auto& [name, value] : o.metrics) events.Metric(name, value);
  for (const auto& [name, rel] : o.artifacts) {
    std::string out_dir = Env("LONGHAUL_OUTPUT_DIR", ".");
    std::string path = out_dir + "/" + rel;
    auto slash = path.rfind('/');
    Status s = MakeDirs(path.substr(0, slash));
    std::string content = StrCat("artifact ", name, "\n");
    if (s.ok()) s = WriteFileAtomic(path, content);
    if (!s.ok()) return Fail(ToStd(s.message()));
    events.Artifact(name, rel, static_cast<int64_t>(content.size()));
  }
  for (int64_t i = 1; i <= o.malformed; ++i) {
    events.Message("info", StrCat("valid line before malformed line ", i));
    events.Raw(StrCat("{\"progress\": not json ", i));
  }
  if (o.malformed > 0) events.Message("info", "valid line after the malformed ones");

  if (o.events > 0) {
    Status s = WriteFastEvents(o.events);
    if (!s.ok()) return Fail(ToStd(s.message()));
  }
  if (o.work > 0) {
    Status s = DoWork(o, events);
    if (!s.ok()) return Fail(ToStd(s.message()));
  }
  if (o.progress > 0) {
    double step = o.sleep_s / static_cast<double>(o.progress);
    for (int64_t i = 1; i <= o.progress; ++i) {
      SleepSeconds(step);
      events.Progress(static_cast<double>(i), static_cast<double>(o.progress), "items");
    }
  } else {
    SleepSeconds(o.sleep_s);
  }
  if (o.stall_after_s) {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(*o.stall_after_s);
    int64_t done = 0;
    while (std::chrono::steady_clock::now() < until) {
      events.Progress(static_cast<double>(++done), std::nullopt, "items");
      SleepSeconds(0.1);
    }
    SleepForever();
  }
  if (o.ready) {
    events.Ready();
    SleepForever();
  }
  return o.exit_code;
}

}  // namespace longhaul::testjob
