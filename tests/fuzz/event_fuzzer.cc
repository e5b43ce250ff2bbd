// Fuzzes ParseEventLine (core/event.h), the parser of every line a stage writes to its events
// file. An event it accepts must keep the header's promises: counts in 0..2^53, step and bytes
// whole, numbers finite, a message level among the four.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/event.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool IsCount(double v) { return v >= 0 && v <= longhaul::kMaxEventCount; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  longhaul::Result<longhaul::StageEvent> ev = longhaul::ParseEventLine(line);
  if (!ev.ok()) {
    FUZZ_CHECK(ev.status().code() == absl::StatusCode::kInvalidArgument,
               "a bad line is InvalidArgument");
    FUZZ_CHECK(!ev.status().message().empty(), "a bad line's error says why");
    return 0;
  }
  FUZZ_CHECK(IsCount(ev->done), "progress.done in range");
  if (ev->total) FUZZ_CHECK(IsCount(*ev->total), "progress.total in range");
  if (ev->step) FUZZ_CHECK(*ev->step >= 0 && IsCount(static_cast<double>(*ev->step)), "step");
  if (ev->bytes) FUZZ_CHECK(*ev->bytes >= 0 && IsCount(static_cast<double>(*ev->bytes)), "bytes");
  FUZZ_CHECK(std::isfinite(ev->value), "metric.value finite");
  if (ev->type == longhaul::EventType::kMessage) {
    FUZZ_CHECK(ev->level == "debug" || ev->level == "info" || ev->level == "warn" ||
                   ev->level == "error",
               "message.level");
  }
  FUZZ_CHECK(!longhaul::EventTypeName(ev->type).empty(), "event type has a name");
  return 0;
}
