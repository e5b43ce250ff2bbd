#include "daemon/rpc/submission_ledger.h"

namespace longhaul::rpc {

Result<v1::SubmitRunResponse> SubmissionLedger::Once(
    const std::string& id, const std::function<Result<v1::SubmitRunResponse>()>& submit) {
  std::unique_lock<std::mutex> lock(mu_);
  std::shared_ptr<Entry> entry;
  for (;;) {
    auto it = entries_.find(id);
    if (it == entries_.end()) break;
    std::shared_ptr<Entry> seen = it->second;
    done_.wait(lock, [&] { return seen->done; });
    if (seen->response) {
      v1::SubmitRunResponse again = *seen->response;
      again.set_resubmitted(true);
      return again;
    }
    // That call failed and was forgotten; look again (another caller may have taken the id).
  }
  entry = std::make_shared<Entry>();
  entries_[id] = entry;
  order_.push_back(id);
  // Forget the oldest ids past capacity; one still at work stays until it is done.
  while (order_.size() > capacity_) {
    auto it = entries_.find(order_.front());
    if (it != entries_.end() && !it->second->done) break;
    if (it != entries_.end()) entries_.erase(it);
    order_.pop_front();
  }
  lock.unlock();

  Result<v1::SubmitRunResponse> result = submit();

  lock.lock();
  entry->done = true;
  if (result.ok()) {
    entry->response = *result;
    entry->response->clear_plan();
  } else {
    auto it = entries_.find(id);
    if (it != entries_.end() && it->second == entry) entries_.erase(it);
  }
  done_.notify_all();
  return result;
}

}  // namespace longhaul::rpc
