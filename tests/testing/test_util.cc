#include "tests/testing/test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/strings.h"

extern char** environ;

namespace longhaul::testing {
namespace {

std::vector<std::string> MergedEnv(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = StrCat(base && *base ? base : "/tmp", "/longhaul-test-XXXXXX");
  char* made = ::mkdtemp(tmpl.data());
  if (made == nullptr) std::abort();
  path_ = made;
}

TempDir::~TempDir() {
  if (std::getenv("LONGHAUL_KEEP_TEST_DIRS") != nullptr) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

bool WaitFor(const std::function<bool()>& pred, int64_t timeout_ms, int64_t poll_ms) {
  int64_t deadline = NowMs() + timeout_ms;
  for (;;) {
    if (pred()) return true;
    if (NowMs() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
}

std::string BinDir() {
  const char* dir = std::getenv("LONGHAUL_BIN_DIR");
  return dir && *dir ? dir : LONGHAUL_TEST_BIN_DIR;
}

std::string SourceDir() {
  const char* dir = std::getenv("LONGHAUL_SOURCE_DIR");
  return dir && *dir ? dir : LONGHAUL_TEST_SOURCE_DIR;
}

std::string BinPath(const std::string& name) { return BinDir() + "/" + name; }

void WriteTextFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) std::abort();
  out << data;
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

Result<std::unique_ptr<Subprocess>> Subprocess::Start(
    const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
    const std::string& log_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const char* out = log_path.empty() ? "/dev/null" : log_path.c_str();
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = MergedEnv(env);
  auto cargs = CStrings(args);
  auto cenv = CStrings(envs);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, cargs[0], &fa, &attr, cargs.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return absl::InternalError(StrCat("spawn ", argv[0], ": ", std::strerror(rc)));
  }
  return std::unique_ptr<Subprocess>(new Subprocess(pid));
}

Subprocess::~Subprocess() {
  if (!status_) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    Wait(10'000);
  }
}

void Subprocess::Signal(int sig) { ::kill(pid_, sig); }
void Subprocess::SignalGroup(int sig) { ::kill(-pid_, sig); }

std::optional<int> Subprocess::Wait(int64_t timeout_ms) {
  if (status_) return status_;
  int64_t deadline = NowMs() + timeout_ms;
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = st;
      return status_;
    }
    if (r < 0) return std::nullopt;
    if (NowMs() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool Subprocess::Running() { return !Wait(0).has_value(); }

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env, int64_t timeout_ms,
                         const std::string& stdin_data) {
  TempDir tmp;
  std::string in_path = tmp.Join("stdin"), out_path = tmp.Join("stdout"),
              err_path = tmp.Join("stderr");
  WriteTextFile(in_path, stdin_data);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = MergedEnv(env);
  auto cargs = CStrings(args);
  auto cenv = CStrings(envs);
  pid_t pid = 0;
  CommandResult result;
  int rc = posix_spawn(&pid, cargs[0], &fa, nullptr, cargs.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    result.err = StrCat("spawn ", argv[0], ": ", std::strerror(rc));
    return result;
  }
  int64_t deadline = NowMs() + timeout_ms;
  int st = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    if (NowMs() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      result.err = "(killed: ran past its deadline)\n";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  result.exit_code = DecodeStatus(st);
  result.out = ReadTextFile(out_path);
  result.err += ReadTextFile(err_path);
  return result;
}

bool ProcessAlive(pid_t pid) {
  std::string stat = ReadTextFile(StrCat("/proc/", pid, "/stat"));
  if (stat.empty()) return false;
  auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  char state = stat[close + 2];
  return state != 'Z' && state != 'X';
}

double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in(StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace longhaul::testing
