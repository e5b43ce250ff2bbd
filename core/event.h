// The stage protocol's event lines (docs/stage-protocol.md): one JSON object per line, with
// exactly one key naming the event.
//
//   {"progress": {"done": 1234, "total": 10000, "unit": "samples"}}
//   {"metric": {"name": "accept_rate", "value": 0.153, "step": 0}}
//   {"output": {"name": "endpoint", "value": "http://10.0.0.5:30000"}}
//   {"artifact": {"name": "samples", "path": "samples.jsonl", "bytes": 81234567}}
//   {"checkpoint": {"path": "ckpt/epoch-3", "step": 3}}
//   {"ready": {}}
//   {"message": {"level": "warn", "text": "429 from server, backing off"}}
//   {"gpu_fault": {"gpu": 1, "uuid": "GPU-5c1f...", "reason": "memory: 3 wrong words"}}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul {

enum class EventType {
  kProgress,
  kMetric,
  kOutput,
  kArtifact,
  kCheckpoint,
  kReady,
  kMessage,
  kGpuFault,
};

std::string_view EventTypeName(EventType type);

struct StageEvent {
  EventType type = EventType::kMessage;
  // progress
  double done = 0;
  std::optional<double> total;
  std::string unit;
  // metric, output, artifact: name
  std::string name;
  // metric
  double value = 0;
  std::optional<int64_t> step;  // metric and checkpoint
  // output value, message text, gpu_fault reason
  std::string text;
  // gpu_fault: the faulty GPU, by its ordinal as the stage sees it (after CUDA_VISIBLE_DEVICES)
  // and/or its UUID; at least one of them
  std::optional<int64_t> gpu;
  std::string uuid;
  // artifact and checkpoint
  std::string path;
  std::optional<int64_t> bytes;
  // message: "debug", "info", "warn" or "error"
  std::string level;
};

// The largest count an event may carry: progress done and total, step, bytes (2^53, the
// largest integer a JSON number holds exactly).
inline constexpr double kMaxEventCount = 9007199254740992.0;

// Parses one line (without its newline). InvalidArgument says what is wrong, e.g.
// "unknown event 'progres'" or "progress.done: expected a number". A number out of range for
// its field is malformed too: a count (done, total, step, bytes) below 0 or above
// kMaxEventCount, a step or bytes with a fractional part, any number beyond a double's range.
Result<StageEvent> ParseEventLine(std::string_view line);

}  // namespace longhaul
