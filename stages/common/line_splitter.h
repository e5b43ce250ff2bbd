// Splits a byte stream (a child's output, read as it arrives) into lines. Lines end at '\n',
// and with split_at_cr also at '\r' (a "\r\n" pair then ends one line), so tqdm-style progress
// bars, which redraw with '\r', are seen as they are drawn. Line ends are not part of a line.
// Bytes after the last line end wait for the next Feed; Finish hands them over. Bytes of a line
// past max_line are dropped. Not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace longhaul::stages {

class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line = 64 * 1024, bool split_at_cr = true)
      : max_line_(max_line), split_at_cr_(split_at_cr) {}

  template <typename Fn>  // Fn: void(std::string_view line)
  void Feed(std::string_view bytes, Fn on_line) {
    for (char c : bytes) {
      if (c == '\n' || (split_at_cr_ && c == '\r')) {
        if (!(c == '\n' && last_cr_ && partial_.empty())) on_line(std::string_view(partial_));
        partial_.clear();
      } else if (partial_.size() < max_line_) {
        partial_.push_back(c);
      }
      last_cr_ = split_at_cr_ && c == '\r';
    }
  }
  // The stream ended: a last line without its line end still counts.
  template <typename Fn>
  void Finish(Fn on_line) {
    if (!partial_.empty()) on_line(std::string_view(partial_));
    partial_.clear();
  }

 private:
  size_t max_line_;
  bool split_at_cr_;
  std::string partial_;
  bool last_cr_ = false;
};

}  // namespace longhaul::stages
