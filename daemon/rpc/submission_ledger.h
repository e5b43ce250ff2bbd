// SubmissionLedger: makes SubmitRun and PivotRun idempotent per client-chosen submission id.
//
// A client whose call timed out cannot know whether its run was made; it sends the same call
// again with the same id, and gets the run the first call made (waiting for that call while
// it is still at work) instead of a second run. A call that failed is forgotten, so the id
// can be tried again. The ledger lives in memory: it holds the last `capacity` ids while
// longhauld runs (a restart forgets them). Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/status.h"
#include "longhaul/v1/client.pb.h"

namespace longhaul::rpc {

class SubmissionLedger {
 public:
  explicit SubmissionLedger(size_t capacity = 10'000) : capacity_(capacity) {}

  // Runs `submit` for an id not seen before. For an id whose call succeeded, returns that
  // call's response again with `resubmitted` set and no plan entries (the summary stays).
  Result<v1::SubmitRunResponse> Once(const std::string& id,
                                     const std::function<Result<v1::SubmitRunResponse>()>& submit);

 private:
  struct Entry {
    bool done = false;
    std::optional<v1::SubmitRunResponse> response;  // set when the call succeeded
  };

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable done_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_;  // guarded by mu_
  std::deque<std::string> order_;                                     // oldest first
};

}  // namespace longhaul::rpc
