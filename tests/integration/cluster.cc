// The processes of a Cluster: starting, killing, restarting and cleaning up after them.
#include "tests/integration/cluster.h"

#include <dirent.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/clock.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::testing {
namespace {

constexpr int64_t kExitWaitMs = 20'000;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string DescribeWaitStatus(const std::optional<int>& st) {
  if (!st) return "still running";
  if (WIFEXITED(*st)) return StrCat("exit ", WEXITSTATUS(*st));
  if (WIFSIGNALED(*st)) return StrCat("killed by signal ", WTERMSIG(*st));
  return StrCat("wait status ", *st);
}

void AppendMarker(const std::string& log, const std::string& what) {
  if (FILE* f = std::fopen(log.c_str(), "a")) {
    std::fprintf(f, "===== cluster: %s (at %lld ms) =====\n", what.c_str(),
                 static_cast<long long>(SystemClock::Get()->NowMs()));
    std::fclose(f);
  }
}

void AddFlags(std::vector<std::string>& argv,
              std::initializer_list<std::pair<const char*, std::string>> flags) {
  for (const auto& [flag, value] : flags) {
    argv.push_back(flag);
    argv.push_back(value);
  }
}

bool Ends(int sig) { return sig == SIGKILL || sig == SIGTERM || sig == SIGINT; }

// Sends `sig` and, when it ends the process, waits for it (a stopped process gets SIGCONT so
// that a SIGTERM is acted on).
void SignalAndWait(Subprocess* p, int sig) {
  if (p == nullptr || !p->Running()) return;
  p->Signal(sig);
  if (!Ends(sig)) return;
  if (sig != SIGKILL) p->Signal(SIGCONT);
  if (!p->Wait(kExitWaitMs)) {
    p->Signal(SIGKILL);
    p->Wait(kExitWaitMs);
  }
}

// A daemon that died of a signal nobody sent it (SIGSEGV, SIGABRT, SIGBUS...) crashed; the
// test's own checks may all have passed before it did, so the harness reports it.
void ExpectNoCrash(Subprocess* p, const std::string& what, const std::string& log) {
  if (p == nullptr) return;
  std::optional<int> status = p->Wait(0);
  if (!status || !WIFSIGNALED(*status) || Ends(WTERMSIG(*status))) return;
  ADD_FAILURE() << what << " crashed (" << DescribeWaitStatus(status) << "); log: " << log;
}

}  // namespace

Cluster::Cluster(ClusterOptions options)
    : options_(std::move(options)),
      state_dir_(tmp_.Join("coordinator")),
      coordinator_log_(tmp_.Join("logs/longhauld.log")) {
  std::filesystem::create_directories(tmp_.Join("logs"));
  std::filesystem::create_directories(state_dir_);
  for (int i = 0; i < options_.agents; ++i) {
    Agent a;
    a.id = StrCat("n", i);
    a.state_dir = tmp_.Join(StrCat("agent-", a.id));
    a.log = tmp_.Join(StrCat("logs/agent-", a.id, ".log"));
    agents_.push_back(std::move(a));
  }
}

Cluster::~Cluster() {
  // Agents first, so that none starts anything more; then whatever they left running; then
  // the coordinator.
  for (Agent& a : agents_) {
    ExpectNoCrash(a.process.get(), StrCat("longhaul-agent ", a.id), a.log);
    SignalAndWait(a.process.get(), SIGKILL);
  }
  KillStages();
  ExpectNoCrash(coordinator_.get(), "longhauld", coordinator_log_);
  SignalAndWait(coordinator_.get(), SIGKILL);
}

Status Cluster::Start() {
  RETURN_IF_ERROR(StartCoordinator("127.0.0.1:0"));
  for (int i = 0; i < agent_count(); ++i) RETURN_IF_ERROR(StartAgent(i));
  for (int i = 0; i < agent_count(); ++i) {
    RETURN_IF_ERROR(WaitAgentConnected(i, 0, options_.start_timeout_ms));
  }
  return OkStatus();
}

std::string Cluster::Binary(const std::string& name) const {
  return options_.bin_dir.empty() ? BinPath(name) : options_.bin_dir + "/" + name;
}

Status Cluster::StartCoordinator(const std::string& listen) {
  std::string addr_file = state_dir_ + "/coordinator.addr";
  std::remove(addr_file.c_str());
  // An empty config file, so that a machine's /etc/longhaul/longhauld.yaml never applies.
  std::vector<std::string> argv = options_.coordinator_command;
  if (argv.empty()) argv = {Binary("longhauld"), "--config", "/dev/null"};
  AddFlags(argv, {{"--state-dir", state_dir_},
                  {"--listen", listen},
                  {"--agent-timeout", options_.agent_timeout},
                  {"--lost-after", options_.lost_after},
                  {"--heartbeat", options_.heartbeat},
                  {"--log-level", options_.log_level}});
  const auto& extra = options_.coordinator_flags;
  if (std::find(extra.begin(), extra.end(), "--http") == extra.end()) {
    AddFlags(argv, {{"--http", "127.0.0.1:0"}});
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::string http_addr_file = state_dir_ + "/http.addr";
  std::remove(http_addr_file.c_str());
  AppendMarker(coordinator_log_, StrCat("starting longhauld on ", listen));
  ExpectNoCrash(coordinator_.get(), "longhauld", coordinator_log_);
  coordinator_.reset();
  ASSIGN_OR_RETURN(coordinator_, Subprocess::Start(argv, {}, coordinator_log_));
  bool up = WaitFor([&] { return !ReadTextFile(addr_file).empty() || !coordinator_->Running(); },
                    options_.start_timeout_ms);
  std::string addr = Trim(ReadTextFile(addr_file));
  if (!up || addr.empty()) {
    return absl::UnavailableError(StrCat(
        "longhauld did not write ", addr_file, " within ", options_.start_timeout_ms,
        " ms (process: ", DescribeWaitStatus(coordinator_->Wait(0)), "); log: ", coordinator_log_));
  }
  address_ = addr;
  // http.addr is written before coordinator.addr; absent when HTTP is off.
  http_address_ = Trim(ReadTextFile(http_addr_file));
  agent_address_ = addr;
  if (!options_.agent_addr_file.empty()) {
    agent_address_ = Trim(ReadTextFile(state_dir_ + "/" + options_.agent_addr_file));
    if (agent_address_.empty()) {
      return absl::UnavailableError(StrCat("longhauld wrote no ", options_.agent_addr_file,
                                           "; log: ", coordinator_log_));
    }
  }
  Connect();
  return OkStatus();
}

void Cluster::Connect() {
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!options_.client_tls_ca_file.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = ReadTextFile(options_.client_tls_ca_file);
    creds = grpc::SslCredentials(ssl);
  }
  auto channel = grpc::CreateChannel(address_, creds);
  stub_ = v1::LonghaulService::NewStub(channel);
}

Status Cluster::StartAgent(int i) {
  Agent& a = agents_.at(static_cast<size_t>(i));
  a.suspended = false;
  std::vector<std::string> argv = options_.agent_command;
  if (argv.empty()) argv = {Binary("longhaul-agent"), "--config", "/dev/null"};  // as longhauld's
  AddFlags(argv, {{"--coordinator", agent_address_},
                  {"--state-dir", a.state_dir},
                  {"--id", a.id},
                  {"--cpus", StrCat(options_.cpus)},
                  {"--gpus", StrCat(static_cast<size_t>(i) < options_.per_agent_gpus.size()
                                        ? options_.per_agent_gpus[static_cast<size_t>(i)]
                                        : options_.gpus)},
                  {"--heartbeat", options_.heartbeat},
                  {"--log-level", options_.log_level}});
  argv.insert(argv.end(), options_.agent_flags.begin(), options_.agent_flags.end());
  if (static_cast<size_t>(i) < options_.per_agent_flags.size()) {
    const auto& extra = options_.per_agent_flags[static_cast<size_t>(i)];
    argv.insert(argv.end(), extra.begin(), extra.end());
  }
  AppendMarker(a.log, StrCat("starting agent ", a.id));
  ExpectNoCrash(a.process.get(), StrCat("longhaul-agent ", a.id), a.log);
  a.process.reset();
  ASSIGN_OR_RETURN(a.process, Subprocess::Start(argv, {}, a.log));
  return OkStatus();
}

void Cluster::KillCoordinator(int sig) {
  AppendMarker(coordinator_log_, StrCat("signal ", sig, " to longhauld"));
  SignalAndWait(coordinator_.get(), sig);
  ExpectNoCrash(coordinator_.get(), "longhauld", coordinator_log_);
}

Status Cluster::RestoreCoordinatorFrom(const std::string& backup) {
  KillCoordinator(SIGTERM);
  std::string db = db_path();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  std::error_code ec;
  std::filesystem::copy_file(backup, db, ec);
  if (ec) return absl::InternalError(StrCat("copy ", backup, " to ", db, ": ", ec.message()));
  return RestartCoordinator();
}

Status Cluster::RestartCoordinator() {
  if (CoordinatorRunning()) KillCoordinator(SIGTERM);
  // The port of the first start: agents dial the address they were given.
  std::string port = address_.substr(address_.rfind(':') + 1);
  int64_t before = SystemClock::Get()->NowMs();
  RETURN_IF_ERROR(StartCoordinator(StrCat("127.0.0.1:", port)));
  if (address_ != StrCat("127.0.0.1:", port)) {
    return absl::InternalError(StrCat("longhauld came back on ", address_, ", not port ", port));
  }
  for (int i = 0; i < agent_count(); ++i) {
    if (!AgentRunning(i) || agents_[static_cast<size_t>(i)].suspended) continue;
    RETURN_IF_ERROR(WaitAgentConnected(i, before - 1, options_.start_timeout_ms));
  }
  return OkStatus();
}

void Cluster::SuspendCoordinator() {
  AppendMarker(coordinator_log_, "SIGSTOP to longhauld");
  if (coordinator_) coordinator_->Signal(SIGSTOP);
}

void Cluster::ResumeCoordinator() {
  if (coordinator_) coordinator_->Signal(SIGCONT);
  AppendMarker(coordinator_log_, "SIGCONT to longhauld");
}

bool Cluster::CoordinatorRunning() { return coordinator_ != nullptr && coordinator_->Running(); }

pid_t Cluster::coordinator_pid() const { return coordinator_ ? coordinator_->pid() : 0; }

std::string Cluster::AgentId(int i) const { return agents_.at(static_cast<size_t>(i)).id; }

std::string Cluster::AgentStateDir(int i) const {
  return agents_.at(static_cast<size_t>(i)).state_dir;
}

void Cluster::KillAgent(int i, int sig) {
  Agent& a = agents_.at(static_cast<size_t>(i));
  AppendMarker(a.log, StrCat("signal ", sig, " to agent ", a.id));
  SignalAndWait(a.process.get(), sig);
  ExpectNoCrash(a.process.get(), StrCat("longhaul-agent ", a.id), a.log);
  if (Ends(sig)) a.suspended = false;
}

Status Cluster::RestartAgent(int i, bool wait_connected) {
  if (AgentRunning(i)) KillAgent(i, SIGTERM);
  int64_t before = SystemClock::Get()->NowMs();
  RETURN_IF_ERROR(StartAgent(i));
  if (!wait_connected) return OkStatus();
  return WaitAgentConnected(i, before - 1, options_.start_timeout_ms);
}

void Cluster::SuspendAgent(int i) {
  Agent& a = agents_.at(static_cast<size_t>(i));
  AppendMarker(a.log, "SIGSTOP to the agent");
  if (a.process) a.process->Signal(SIGSTOP);
  a.suspended = true;
}

void Cluster::ResumeAgent(int i) {
  Agent& a = agents_.at(static_cast<size_t>(i));
  if (a.process) a.process->Signal(SIGCONT);
  a.suspended = false;
  AppendMarker(a.log, "SIGCONT to the agent");
}

std::optional<int> Cluster::WaitAgentExit(int i, int64_t timeout_ms) {
  Agent& a = agents_.at(static_cast<size_t>(i));
  if (a.process == nullptr) return std::nullopt;
  return a.process->Wait(timeout_ms);
}

std::string Cluster::AgentLog(int i) const {
  return ReadTextFile(agents_.at(static_cast<size_t>(i)).log);
}

bool Cluster::AgentRunning(int i) {
  Agent& a = agents_.at(static_cast<size_t>(i));
  return a.process != nullptr && a.process->Running();
}

pid_t Cluster::agent_pid(int i) const {
  const Agent& a = agents_.at(static_cast<size_t>(i));
  return a.process ? a.process->pid() : 0;
}

Status Cluster::WaitAgentConnected(int i, int64_t after_ms, int64_t timeout_ms) {
  const std::string& id = AgentId(i);
  std::string last = "no answer yet";
  bool ok = WaitFor(
      [&] {
        if (!AgentRunning(i)) {
          last = "the agent process has exited";
          return true;
        }
        Result<std::vector<v1::AgentInfo>> agents = ListAgents();
        if (!agents.ok()) {
          last = StrCat("ListAgents: ", ToStd(agents.status().message()));
          return false;
        }
        last = StrCat("agent ", id, " not listed");
        for (const v1::AgentInfo& a : *agents) {
          if (a.id() != id) continue;
          last = StrCat("agent ", id, " ", AgentStateName(a.state()), ", connected_at_ms ",
                        a.connected_at_ms());
          return a.state() == v1::AGENT_CONNECTED && a.connected_at_ms() > after_ms;
        }
        return false;
      },
      timeout_ms, 20);
  if (ok && AgentRunning(i)) return OkStatus();
  return absl::DeadlineExceededError(StrCat("agent ", id, " did not connect within ", timeout_ms,
                                            " ms: ", last,
                                            "; log: ", agents_.at(static_cast<size_t>(i)).log));
}

CommandResult Cluster::Cli(const std::vector<std::string>& args, int64_t timeout_ms) {
  std::vector<std::string> argv = {BinPath("longhaul")};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, CliEnv(), timeout_ms);
}

std::unique_ptr<Subprocess> Cluster::StartCli(const std::vector<std::string>& args,
                                              const std::string& log_name) {
  std::vector<std::string> argv = {BinPath("longhaul")};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p = Subprocess::Start(argv, CliEnv(), tmp_.Join("logs/cli-" + log_name + ".log"));
  return p.ok() ? std::move(*p) : nullptr;
}

std::map<std::string, std::string> Cluster::CliEnv() const {
  std::map<std::string, std::string> env = {{"LONGHAUL_COORDINATOR", address_}};
  if (!options_.client_token.empty()) env["LONGHAUL_TOKEN"] = options_.client_token;
  if (!options_.client_tls_ca_file.empty()) env["LONGHAUL_TLS_CA"] = options_.client_tls_ca_file;
  return env;
}

std::string Cluster::WriteFile(const std::string& name, const std::string& text) {
  std::string path = tmp_.Join(name);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  WriteTextFile(path, text);
  return path;
}

void Cluster::KillStages() {
  // Shims, from the pid files the agents' attempts hold.
  for (const Agent& a : agents_) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(a.state_dir + "/attempts", ec)) {
      auto j = nlohmann::json::parse(ReadTextFile(e.path().string() + "/pid.json"), nullptr, false);
      if (j.is_discarded() || !j.is_object()) continue;
      pid_t stage = j.value("stage_pid", 0), shim = j.value("shim_pid", 0);
      if (stage > 0 && ProcessAlive(stage)) ::kill(-stage, SIGKILL);
      if (shim > 0 && ProcessAlive(shim)) ::kill(shim, SIGKILL);
    }
  }
  // Stages, and anything they forked, run in output dirs under this cluster's temp dir: that
  // also catches a stage whose pid file was not written yet.
  std::string root = tmp_.path() + "/";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == ::getpid()) continue;
    char buf[PATH_MAX];
    ssize_t n = ::readlink((e.path().string() + "/cwd").c_str(), buf, sizeof buf - 1);
    if (n <= 0) continue;
    std::string cwd(buf, static_cast<size_t>(n));
    if (StartsWith(cwd + "/", root)) ::kill(pid, SIGKILL);
  }
}

}  // namespace longhaul::testing
