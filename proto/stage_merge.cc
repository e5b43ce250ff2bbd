#include "proto/stage_merge.h"

namespace longhaul {

std::vector<int> MergedRun::Apply(const v1::RunUpdate& update) {
  if (update.snapshot()) Clear();
  return Merge(update.run());
}

std::vector<int> MergedRun::Merge(const v1::Run& run) {
  google::protobuf::RepeatedPtrField<v1::Stage> stages;
  stages.Swap(run_.mutable_stages());
  run_ = run;
  run_.clear_stages();
  fields_ = run_;
  run_.mutable_stages()->Swap(&stages);
  std::vector<int> touched;
  touched.reserve(run.stages_size());
  for (const v1::Stage& s : run.stages()) {
    auto [it, added] = index_.try_emplace(s.name(), run_.stages_size());
    if (added) {
      *run_.add_stages() = s;
    } else {
      *run_.mutable_stages(it->second) = s;
    }
    touched.push_back(it->second);
  }
  return touched;
}

void MergedRun::Clear() {
  run_.Clear();
  fields_.Clear();
  index_.clear();
}

const v1::Stage* MergedRun::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &run_.stages(it->second);
}

int EndOfPiece(const google::protobuf::RepeatedPtrField<v1::Stage>& stages, int begin, int end) {
  size_t bytes = 0;
  int i = begin;
  while (i < end && i - begin < kMaxStagesPerMessage) {
    bytes += stages.Get(i).ByteSizeLong();
    if (bytes > kMaxStageBytesPerMessage && i > begin) break;
    ++i;
  }
  return i;
}

}  // namespace longhaul
