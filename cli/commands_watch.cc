// watch: follows a run until it ends, through WatchRun, reconnecting if the coordinator goes
// away for a while (a restart of longhauld must not end a multi-day watch).
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/watch.h"
#include "core/duration.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::cli {
namespace {

constexpr int64_t kGiveUpAfterMs = 5 * 60'000;
constexpr int64_t kMaxBackoffMs = 5'000;
constexpr int64_t kRedrawMs = 1'000;

// On a terminal, redraws every second so elapsed times and ETAs move between updates.
class Ticker {
 public:
  Ticker(WatchRenderer& renderer, std::mutex& mu) : renderer_(renderer), mu_(mu) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Ticker() {
    {
      std::lock_guard<std::mutex> lock(stop_mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(stop_mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(kRedrawMs), [this] { return stop_; })) {
      std::lock_guard<std::mutex> draw(mu_);
      renderer_.Redraw();
    }
  }

  WatchRenderer& renderer_;
  std::mutex& mu_;
  std::mutex stop_mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

int Watch(CommandContext& ctx, int64_t run_id, const std::string& interval) {
  Result<int64_t> interval_ms = ParseDurationMs(interval);
  if (!interval_ms.ok() || *interval_ms < 0) {
    return ctx.Fail(absl::InvalidArgumentError(
        StrCat("--interval '", interval, "': expected a duration such as 10s")));
  }
  std::mutex mu;
  WatchRenderer renderer(ctx.out(), *ctx.env.clock, ctx.env.stdout_is_tty && !ctx.json,
                         ctx.env.terminal_width, *interval_ms);
  RunTracker json_tracker;  // with --json, the state is only tracked, for the exit code
  auto current = [&]() -> const v1::Run& { return ctx.json ? json_tracker.run() : renderer.run(); };
  std::optional<Ticker> ticker;
  if (ctx.env.stdout_is_tty && !ctx.json) ticker.emplace(renderer, mu);
  bool received = false;
  int64_t failing_since = 0;
  int64_t backoff_ms = 200;
  for (;;) {
    Status s = ctx.coordinator->WatchRun(run_id, [&](const v1::RunUpdate& update) {
      std::lock_guard<std::mutex> lock(mu);
      received = true;
      failing_since = 0;
      backoff_ms = 200;
      if (ctx.json) {
        PrintJson(ctx, update);  // one JSON object per line
        json_tracker.Apply(update);
      } else {
        renderer.OnUpdate(update);
      }
    });
    {
      std::lock_guard<std::mutex> lock(mu);
      if (received && IsTerminal(current().status())) break;
    }
    bool transient = s.ok() || s.code() == absl::StatusCode::kUnavailable ||
                     s.code() == absl::StatusCode::kDeadlineExceeded;
    // Before the first update an error is the answer (no such run, no coordinator).
    if (!received || !transient) {
      ticker.reset();
      return ctx.Fail(s.ok() ? absl::UnavailableError("the coordinator ended the watch early") : s);
    }
    int64_t now = ctx.NowMs();
    if (failing_since == 0) {
      failing_since = now;
      ctx.err() << "longhaul: lost the watch on run " << run_id << " ("
                << (s.ok() ? std::string("stream ended") : ToStd(s.message()))
                << "); reconnecting\n";
    } else if (now - failing_since > kGiveUpAfterMs) {
      ticker.reset();
      return ctx.Fail(s.ok() ? absl::UnavailableError("the coordinator keeps ending the watch")
                             : s);
    }
    ctx.env.sleep_ms(backoff_ms);
    backoff_ms = std::min(backoff_ms * 2, kMaxBackoffMs);
  }
  ticker.reset();
  if (!ctx.json) renderer.Finish();
  return ExitCodeForRun(current().status());
}

}  // namespace longhaul::cli
