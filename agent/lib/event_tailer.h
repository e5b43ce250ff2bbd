// Reads a stage's events.jsonl from a position onwards, a batch at a time, numbering lines.
//
// seq is the 1-based line number in the file. Blank lines (only whitespace) are counted but
// never returned. Only complete lines are returned, except when the caller says the writer
// has ended (`final`), when a last line without '\n' counts too. A line longer than
// kMaxLineBytes is replaced by a message event that says so, so that one runaway line can
// neither stall the attempt's events nor break the stream (gRPC limits message size).
// The file may not exist yet: that reads as empty. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::agent {

struct EventLine {
  int64_t seq = 0;
  std::string text;        // without the newline
  int64_t end_offset = 0;  // file offset just after this line
};

struct EventBatch {
  std::vector<EventLine> lines;
  bool at_end = false;  // nothing more to read now (the rest is a partial line, or EOF)
};

class EventTailer {
 public:
  static constexpr int64_t kMaxLineBytes = 1 << 20;

  explicit EventTailer(std::string path, int64_t offset = 0, int64_t seq = 0);
  ~EventTailer();
  EventTailer(const EventTailer&) = delete;
  EventTailer& operator=(const EventTailer&) = delete;

  // Reads at most `max_lines` non-blank lines and roughly `max_bytes` of text.
  Result<EventBatch> Read(size_t max_lines, size_t max_bytes, bool final);

  // Continues reading at `offset`, where line `seq` ended (0, 0 for the start).
  void Rewind(int64_t offset, int64_t seq);

  int64_t offset() const { return offset_; }
  int64_t seq() const { return seq_; }
  const std::string& path() const { return path_; }

 private:
  Status EnsureOpen();

  std::string path_;
  int fd_ = -1;
  int64_t offset_ = 0;  // the start of the first line not yet returned or skipped
  int64_t seq_ = 0;     // the line number of the line that ends at offset_
  // For a partial line too long to keep: from offset_ up to here there is no '\n'.
  int64_t scanned_to_ = 0;
};

}  // namespace longhaul::agent
