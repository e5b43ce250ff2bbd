// longhauld: the coordinator daemon.
#include <csignal>
#include <random>
#include <cstdio>
#include <thread>

#include <CLI/CLI.hpp>

#include "core/logging.h"
#include "core/memory.h"
#include "core/rlimit.h"
#include "core/strings.h"
#include "daemon/server/coordinator.h"
#include "daemon/server/coordinator_flags.h"
#include "daemon/store/backup.h"

int main(int argc, char** argv) {
  longhaul::FixMallocThresholds();
  longhaul::RaiseOpenFileLimit();
  CLI::App app{"longhauld: the longhaul coordinator. Schedules workflow runs onto agents and "
               "keeps their history in SQLite."};
  longhaul::server::CoordinatorFlags flags;
  longhaul::server::AddCoordinatorFlags(app, &flags);
  longhaul::config::CliConfig file(app, longhaul::server::kCoordinatorConfigPath);
  CLI11_PARSE(app, argc, argv);
  std::vector<std::string> errors = file.Apply();
  for (auto& e : longhaul::server::CheckCoordinatorFlags(&flags, file)) {
    errors.push_back(std::move(e));
  }
  if (file.check_only()) {  // a real start refuses these in Coordinator::Start(), exit 1
    for (auto& e : longhaul::server::CheckCoordinatorExposure(flags, file)) {
      errors.push_back(std::move(e));
    }
  }
  if (!errors.empty()) {
    for (const auto& e : errors) std::fprintf(stderr, "longhauld: %s\n", e.c_str());
    return 2;
  }
  if (file.check_only()) {
    std::fputs(file.Effective().c_str(), stdout);
    return 0;
  }
  longhaul::server::CoordinatorOptions& options = flags.options;
  if (!flags.backup.empty()) {
    std::string db =
        options.db_path.empty() ? options.state_dir + "/longhaul.db" : options.db_path;
    auto done = longhaul::store::BackupDatabase(db, flags.backup);
    if (!done.ok()) {
      std::fprintf(stderr, "longhauld: %s\n", longhaul::ToStd(done.status().message()).c_str());
      return 1;
    }
    std::printf("backed up %s to %s: %lld pages, %lld bytes, schema version %d, integrity_check "
                "ok; copy %lld ms, check %lld ms, total %lld ms\n",
                db.c_str(), done->path.c_str(), static_cast<long long>(done->pages),
                static_cast<long long>(done->bytes), done->schema_version,
                static_cast<long long>(done->copy_ms), static_cast<long long>(done->check_ms),
                static_cast<long long>(done->total_ms));
    return 0;
  }
  options.scheduler.seed = std::random_device{}();
  // Signals are taken by a thread of their own, so shutdown never runs in a handler. They are
  // blocked before any thread starts (logging's flusher included), so that every thread
  // inherits the mask and none dies of a SIGHUP.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  longhaul::SetupLogging(flags.log_level, flags.log_file);

  longhaul::server::Coordinator coordinator(options);
  auto addr = coordinator.Start();
  if (!addr.ok()) {
    longhaul::GetLogger("longhauld")->error("cannot start: {}",
                                            longhaul::ToStd(addr.status().message()));
    return 1;
  }
  std::thread signals([&] {
    auto log = longhaul::GetLogger("longhauld");
    for (;;) {
      int sig = 0;
      sigwait(&set, &sig);
      if (sig != SIGHUP) {
        log->info("signal {}: shutting down", sig);
        coordinator.Shutdown();
        return;
      }
      longhaul::Status s = coordinator.ReloadTokens();
      if (s.ok()) {
        log->info("SIGHUP: tokens reloaded from {}", options.security.tokens_file);
      } else {
        log->error("SIGHUP: tokens not reloaded, the previous ones stay in force: {}",
                   longhaul::ToStd(s.message()));
      }
    }
  });
  coordinator.Wait();
  coordinator.Shutdown();
  signals.detach();
  return 0;
}
