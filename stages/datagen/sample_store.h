// lh-datagen's output on disk, crash-safe and resumable.
//
// OUT.jsonl holds one finished sample per line, appended with a single write(2) each, so a
// kill -9 leaves at most a torn last line, which Open() cuts off; ids already in the file are
// finished and never generated again, so no id is ever written twice. The failed side file
// holds the samples that failed every retry in the latest attempt; it is emptied by Open(),
// because an earlier attempt's failures are tried again.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>

#include "core/status.h"
#include "stages/common/jsonl.h"

namespace longhaul::stages {

class SampleStore {
 public:
  // Errors: a corrupt line in the middle of OUT (not a torn end) names the line; an
  // unwritable directory names the path.
  static Result<SampleStore> Open(const std::string& out_path, const std::string& failed_path);

  bool Finished(const std::string& id) const { return finished_.count(id) > 0; }
  size_t finished_count() const { return finished_.size(); }
  int64_t truncated_bytes() const { return truncated_bytes_; }
  const std::string& out_path() const { return out_.path(); }
  const std::string& failed_path() const { return failed_.path(); }

  // Appends a finished sample. FailedPrecondition if its id is already finished: the caller
  // has a bug, and writing it would duplicate the id.
  Status AppendSample(const Conversation& sample);
  Status AppendFailure(const Conversation& sample, const std::string& error, int attempts);
  Status Sync();

 private:
  JsonlAppender out_;
  JsonlAppender failed_;
  std::unordered_set<std::string> finished_;
  int64_t truncated_bytes_ = 0;
};

}  // namespace longhaul::stages
