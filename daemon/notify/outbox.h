// The pending notifications and when each is next tried: the delivery rules without threads
// or I/O, so that they are tested with a fake clock. Not thread-safe (the Notifier locks).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/status.h"
#include "daemon/store/rows.h"

namespace longhaul::notify {

// How often and how long a notification is tried: try n+1 follows a failed try n after
// backoff * 2^(n-1), at most max_backoff; after max_tries failed tries it is failed. The
// defaults try 8 times over about 10 minutes (5s, 10s, 20s, 40s, 80s, 160s, 300s).
struct RetryPolicy {
  int max_tries = 8;
  int64_t backoff_ms = 5'000;
  int64_t max_backoff_ms = 300'000;
};

// The wait after failed try `tries` (1-based).
int64_t BackoffMs(const RetryPolicy& policy, int tries);

// Applies one try's result to `row` (its tries counted, state and times set): delivered, or
// pending with its next try, or failed once policy.max_tries tries have failed.
void Settle(store::NotificationRow* row, const Status& result, int64_t now_ms,
            const RetryPolicy& policy);

class Outbox {
 public:
  // Holds `row` until it is due (row.next_try_at_ms; unset: at once).
  void Add(store::NotificationRow row);
  // When the earliest held row is due; nullopt when none is held.
  std::optional<int64_t> NextDueMs() const;
  // Removes and returns every row due at `now_ms`, oldest due first.
  std::vector<store::NotificationRow> TakeDue(int64_t now_ms);
  size_t size() const { return rows_.size(); }

 private:
  std::multimap<std::pair<int64_t, int64_t>, store::NotificationRow> rows_;  // (due, id)
};

}  // namespace longhaul::notify
