// Keeping a run current from a stream of RunUpdates, and cutting stage lists into bounded
// pieces: shared by the scheduler's Watcher, the HTTP API's SSE hub and `longhaul watch`.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "longhaul/v1/client.pb.h"

namespace longhaul {

// The most stages one RunUpdate or one page carries, and about the most bytes of stages.
inline constexpr int kMaxStagesPerMessage = 1000;
inline constexpr size_t kMaxStageBytesPerMessage = 1 << 20;

// A run as updates describe it: the newest run fields and every stage by name, in the order
// first seen. Upsert costs O(stages given); a lookup by name is O(1). Not thread-safe.
class MergedRun {
 public:
  // A snapshot update (update.snapshot()) replaces everything; any other adds its stages,
  // replacing those of the same name, and takes its run fields. Returns the indexes (in
  // run().stages()) of the stages it carried, in its order.
  std::vector<int> Apply(const v1::RunUpdate& update);
  // Takes the run fields of `run` (not its stages) and upserts its stages.
  std::vector<int> Merge(const v1::Run& run);
  void Clear();

  const v1::Run& run() const { return run_; }
  // The run fields alone (no stages).
  const v1::Run& fields() const { return fields_; }
  bool empty() const { return run_.id() == 0 && run_.stages_size() == 0; }
  // The stage named `name`, or null.
  const v1::Stage* Find(const std::string& name) const;

 private:
  v1::Run run_;
  v1::Run fields_;
  std::unordered_map<std::string, int> index_;
};

// Splits [begin, end) of `stages` at the first index where the piece would pass
// kMaxStagesPerMessage stages or kMaxStageBytesPerMessage bytes (at least one stage).
int EndOfPiece(const google::protobuf::RepeatedPtrField<v1::Stage>& stages, int begin, int end);

}  // namespace longhaul
