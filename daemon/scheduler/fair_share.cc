#include "daemon/scheduler/fair_share.h"

#include <algorithm>
#include <cmath>

namespace longhaul::scheduler {
namespace {

constexpr double kMsPerHour = 3'600'000.0;

}  // namespace

void UsageLedger::Start(int64_t id, const std::vector<std::string>& accounts, int32_t gpus,
                        int64_t start_ms) {
  if (gpus <= 0) return;
  running_.try_emplace(id, Running{id, accounts, gpus, start_ms});
}

void UsageLedger::End(int64_t id, int64_t end_ms) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  Running r = std::move(it->second);
  running_.erase(it);
  AddEnded(r.accounts, r.gpus, r.start_ms, std::max(end_ms, r.start_ms));
}

void UsageLedger::AddEnded(const std::vector<std::string>& accounts, int32_t gpus, int64_t start_ms,
                           int64_t end_ms) {
  if (gpus <= 0 || end_ms <= start_ms) return;
  for (const std::string& name : accounts) {
    Account& a = accounts_[name];
    a.ended.push_back({gpus, start_ms, end_ms});
    Fold(a, gpus, start_ms, end_ms);
  }
}

void UsageLedger::Clear() {
  running_.clear();
  accounts_.clear();
}

double UsageLedger::Decayed(int32_t gpus, int64_t start_ms, int64_t end_ms, int64_t now_ms) const {
  if (half_life_ms_ <= 0 || end_ms <= start_ms) return 0;
  // The integral of 2^(-(now - t) / H) over [start, end], in hours, times the GPUs.
  double h = static_cast<double>(half_life_ms_);
  double to_end = std::exp2(-static_cast<double>(now_ms - end_ms) / h);
  double to_start = std::exp2(-static_cast<double>(now_ms - start_ms) / h);
  return gpus * h / std::log(2.0) * (to_end - to_start) / kMsPerHour;
}

void UsageLedger::Fold(Account& a, int32_t gpus, int64_t start_ms, int64_t end_ms) {
  if (half_life_ms_ <= 0) return;
  // Kept decayed to the latest end seen, so that the factors stay near 1.
  int64_t at = std::max(a.decayed_at_ms, end_ms);
  a.decayed = a.decayed * std::exp2(-static_cast<double>(at - a.decayed_at_ms) / half_life_ms_) +
              Decayed(gpus, start_ms, end_ms, at);
  a.decayed_at_ms = at;
}

int32_t UsageLedger::GpusInUse(const std::string& account) const {
  int32_t n = 0;
  for (const auto& [id, r] : running_) {
    if (std::find(r.accounts.begin(), r.accounts.end(), account) != r.accounts.end()) n += r.gpus;
  }
  return n;
}

double UsageLedger::WindowGpuHours(const std::string& account, int64_t window_ms,
                                   int64_t now_ms) const {
  int64_t from = now_ms - window_ms;
  double gpu_ms = 0;
  auto add = [&](int32_t gpus, int64_t start, int64_t end) {
    int64_t s = std::max(start, from), e = std::min(end, now_ms);
    if (e > s) gpu_ms += static_cast<double>(gpus) * static_cast<double>(e - s);
  };
  if (auto it = accounts_.find(account); it != accounts_.end()) {
    for (const Interval& i : it->second.ended) add(i.gpus, i.start_ms, i.end_ms);
  }
  for (const auto& [id, r] : running_) {
    if (std::find(r.accounts.begin(), r.accounts.end(), account) != r.accounts.end()) {
      add(r.gpus, r.start_ms, now_ms);
    }
  }
  return gpu_ms / kMsPerHour;
}

double UsageLedger::DecayedGpuHours(const std::string& account, int64_t now_ms) const {
  if (half_life_ms_ <= 0) return 0;
  double sum = 0;
  if (auto it = accounts_.find(account); it != accounts_.end()) {
    const Account& a = it->second;
    sum = a.decayed * std::exp2(-static_cast<double>(now_ms - a.decayed_at_ms) / half_life_ms_);
  }
  for (const auto& [id, r] : running_) {
    if (std::find(r.accounts.begin(), r.accounts.end(), account) != r.accounts.end()) {
      sum += Decayed(r.gpus, r.start_ms, std::max(now_ms, r.start_ms), now_ms);
    }
  }
  return sum;
}

std::vector<std::string> UsageLedger::Accounts() const {
  std::vector<std::string> out;
  for (const auto& [name, a] : accounts_) out.push_back(name);
  for (const auto& [id, r] : running_) {
    for (const std::string& name : r.accounts) {
      if (!accounts_.count(name)) out.push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void UsageLedger::Prune(int64_t now_ms) {
  for (auto& [name, a] : accounts_) {
    std::erase_if(a.ended, [&](const Interval& i) { return i.end_ms < now_ms - keep_ms_; });
  }
}

std::map<std::string, int> FairSharePositions(std::vector<FairShareEntry> entries) {
  auto factor = [](const FairShareEntry& e) { return e.usage_gpu_hours / std::max(e.share, 1e-9); };
  std::sort(entries.begin(), entries.end(), [&](const FairShareEntry& a, const FairShareEntry& b) {
    return factor(a) < factor(b);
  });
  std::map<std::string, int> out;
  int position = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) {
      double prev = factor(entries[i - 1]), cur = factor(entries[i]);
      if (cur - prev > 1e-9 * std::max(1.0, std::abs(cur))) ++position;
    }
    out[entries[i].account] = position;
  }
  return out;
}

std::string AccountLabel(const std::string& account) {
  size_t colon = account.find(':');
  if (colon == std::string::npos) return account;
  std::string name = account.substr(colon + 1);
  return account.substr(0, colon) + " " + (name.empty() ? "(none)" : name);
}

}  // namespace longhaul::scheduler
