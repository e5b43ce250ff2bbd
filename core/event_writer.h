// The writing side of the stage protocol, for stage binaries written in C++.
//
// EventWriter::FromEnv() appends to the file named by LONGHAUL_EVENTS; outside longhaul
// (the variable unset) every call is a no-op, so a stage binary runs the same by hand.
// Each event is one write(2) of one whole line on an O_APPEND descriptor, so lines from
// several threads or processes never interleave. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul {

class EventWriter {
 public:
  // Opens $LONGHAUL_EVENTS if set; a writer that drops everything if not.
  static EventWriter FromEnv();
  // Opens `path` for appending (created if missing). An empty path gives a no-op writer.
  static Result<EventWriter> Open(const std::string& path);

  EventWriter() = default;
  EventWriter(EventWriter&& other) noexcept;
  EventWriter& operator=(EventWriter&& other) noexcept;
  ~EventWriter();

  bool enabled() const { return fd_ >= 0; }

  void Progress(double done, std::optional<double> total, std::string_view unit);
  void Metric(std::string_view name, double value, std::optional<int64_t> step = std::nullopt);
  void Output(std::string_view name, std::string_view value);
  void Artifact(std::string_view name, std::string_view path, std::optional<int64_t> bytes);
  void Checkpoint(std::string_view path, std::optional<int64_t> step);
  void Ready();
  void Message(std::string_view level, std::string_view text);
  // GPU `gpu` (its ordinal as this process sees it) failed a check: the coordinator takes it
  // out of service and ends the attempt as gpu_fault (docs/stage-protocol.md).
  void GpuFault(int gpu, std::string_view uuid, std::string_view reason);

  // Appends one already-formed JSON line (no newline). For tests and tools.
  void Raw(std::string_view line);

 private:
  explicit EventWriter(int fd) : fd_(fd) {}
  void WriteLine(const std::string& line);

  int fd_ = -1;
  std::mutex mu_;
};

}  // namespace longhaul
