#include "daemon/notify/outbox.h"

#include <algorithm>

namespace longhaul::notify {

int64_t BackoffMs(const RetryPolicy& policy, int tries) {
  int64_t delay = policy.backoff_ms;
  for (int i = 1; i < tries && delay < policy.max_backoff_ms; ++i) delay *= 2;
  return std::min(delay, policy.max_backoff_ms);
}

void Settle(store::NotificationRow* row, const Status& result, int64_t now_ms,
            const RetryPolicy& policy) {
  row->tries++;
  if (result.ok()) {
    row->state = "delivered";
    row->delivered_at_ms = now_ms;
    row->next_try_at_ms.reset();
    return;
  }
  row->last_error = std::string(result.message());
  if (row->tries >= policy.max_tries) {
    row->state = "failed";
    row->next_try_at_ms.reset();
    return;
  }
  row->state = "pending";
  row->next_try_at_ms = now_ms + BackoffMs(policy, row->tries);
}

void Outbox::Add(store::NotificationRow row) {
  int64_t due = row.next_try_at_ms.value_or(0);
  int64_t id = row.id;
  rows_.emplace(std::make_pair(due, id), std::move(row));
}

std::optional<int64_t> Outbox::NextDueMs() const {
  if (rows_.empty()) return std::nullopt;
  return rows_.begin()->first.first;
}

std::vector<store::NotificationRow> Outbox::TakeDue(int64_t now_ms) {
  std::vector<store::NotificationRow> due;
  while (!rows_.empty() && rows_.begin()->first.first <= now_ms) {
    due.push_back(std::move(rows_.begin()->second));
    rows_.erase(rows_.begin());
  }
  return due;
}

}  // namespace longhaul::notify
