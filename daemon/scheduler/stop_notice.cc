#include "daemon/scheduler/stop_notice.h"

#include <utility>

#include "absl/time/time.h"

namespace longhaul::scheduler {

const StopNotice* StopNotices::Find(int64_t attempt_id) const {
  auto it = by_attempt_.find(attempt_id);
  return it == by_attempt_.end() ? nullptr : &it->second;
}

void StopNotices::Add(int64_t attempt_id, StopNotice notice) {
  by_attempt_[attempt_id] = std::move(notice);
}

std::optional<StopNotice> StopNotices::Take(int64_t attempt_id) {
  auto it = by_attempt_.find(attempt_id);
  if (it == by_attempt_.end()) return std::nullopt;
  StopNotice n = std::move(it->second);
  by_attempt_.erase(it);
  return n;
}

std::string NoticeClockText(int64_t ms) {
  return absl::FormatTime("%H:%M:%S UTC", absl::FromUnixMillis(ms), absl::UTCTimeZone());
}

}  // namespace longhaul::scheduler
