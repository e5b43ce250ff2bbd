// GPU use by team and user (docs/scheduling.md, "Quotas" and "Fair share"): what quotas and
// the fair-share order of the ready queue are computed from. Apart from the scheduler, with
// the time passed in, so that it can be tested with a fake clock.
//
// Each attempt that holds GPUs counts for its run's accounts ("team:vision", "user:olga"):
// from its start, its GPUs times the time it has run. Ended attempts are kept as intervals for
// the rolling windows of GPU-hour quotas, and folded into a decayed sum for fair share (each
// GPU-hour counts half as much one half-life later). Nothing here is stored: the scheduler
// rebuilds the ledger from the stored attempts when it loads its state (LoadEnded), so the
// figures survive a restart of longhauld.
//
// Thread-safety: none (the scheduler's loop thread).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace longhaul::scheduler {

class UsageLedger {
 public:
  // `half_life_ms` 0: no decay is computed (DecayedGpuHours is 0); `keep_ms`: how far back
  // ended intervals are kept for windows (the longest quota period).
  UsageLedger(int64_t half_life_ms = 0, int64_t keep_ms = 0)
      : half_life_ms_(half_life_ms), keep_ms_(keep_ms) {}

  // Attempt `id` holds `gpus` GPUs from `start_ms`, counted for each of `accounts`. Starting an
  // attempt already running does nothing.
  void Start(int64_t id, const std::vector<std::string>& accounts, int32_t gpus, int64_t start_ms);
  // It has ended at `end_ms`: its interval moves to the ended ones. Unknown ids do nothing.
  void End(int64_t id, int64_t end_ms);
  // An attempt that ended before the ledger was made (the store's, at recovery).
  void AddEnded(const std::vector<std::string>& accounts, int32_t gpus, int64_t start_ms,
                int64_t end_ms);
  void Clear();

  // GPUs its running attempts hold now.
  int32_t GpusInUse(const std::string& account) const;
  // GPU-hours used in (now - window_ms, now], running attempts included.
  double WindowGpuHours(const std::string& account, int64_t window_ms, int64_t now_ms) const;
  // GPU-hours decayed with the half-life to `now_ms`, running attempts included.
  double DecayedGpuHours(const std::string& account, int64_t now_ms) const;

  struct Running {
    int64_t id = 0;
    std::vector<std::string> accounts;
    int32_t gpus = 0;
    int64_t start_ms = 0;
  };
  const std::map<int64_t, Running>& running() const { return running_; }
  // Every account that has used GPUs (running, or ended within what is kept).
  std::vector<std::string> Accounts() const;

  // Drops ended intervals that end before now - keep_ms (a window no longer sees them).
  void Prune(int64_t now_ms);

 private:
  struct Interval {
    int32_t gpus;
    int64_t start_ms;
    int64_t end_ms;
  };
  struct Account {
    std::deque<Interval> ended;  // in the order they were added
    double decayed = 0;          // ended GPU-hours decayed to decayed_at_ms
    int64_t decayed_at_ms = 0;
  };
  // GPU-hours of `gpus` GPUs over [start, end], decayed to `now`.
  double Decayed(int32_t gpus, int64_t start_ms, int64_t end_ms, int64_t now_ms) const;
  void Fold(Account& a, int32_t gpus, int64_t start_ms, int64_t end_ms);

  int64_t half_life_ms_;
  int64_t keep_ms_;
  std::map<int64_t, Running> running_;
  std::map<std::string, Account> accounts_;
};

// The fair-share order: accounts by decayed use divided by their share (the GPUs a quota
// guarantees them, else 1), least first. Accounts whose figures are equal (those with no
// recent use, say) share a position, so that age orders them.
struct FairShareEntry {
  std::string account;
  double usage_gpu_hours = 0;
  double share = 1;
};
// Position of each account (0 = furthest under its share). Two figures within 1e-9 relative of
// each other are equal.
std::map<std::string, int> FairSharePositions(std::vector<FairShareEntry> entries);

// "team vision" for "team:vision", "user olga" for "user:olga".
std::string AccountLabel(const std::string& account);

}  // namespace longhaul::scheduler
