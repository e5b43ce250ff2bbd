// A log file sink that never leaves a line cut in two, for logs kept on a disk that may fill.
// spdlog's basic_file_sink buffers through stdio, and a flush on a full disk writes whatever
// part of the buffer fits, ending the file mid-line. This sink writes each formatted line with
// one write(2) on an O_APPEND descriptor; a line that does not fit whole is taken back
// (ftruncate to where it began) and counted. When lines fit again, it first writes one line
// saying how many were dropped, so the file shows the gap. Unbuffered: meant for the
// info-level logs of the daemons, not for a flood.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace longhaul {

class LineFileSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Opens (creates) `path` for appending; throws spdlog::spdlog_ex naming it when it cannot,
  // as spdlog's own file sink does.
  explicit LineFileSink(const std::string& path);
  ~LineFileSink() override;

  // Lines dropped since the last line that was written (0 when none).
  int64_t dropped() const { return dropped_.load(); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}

 private:
  // Writes `line` whole or not at all; 0 or an errno value.
  int WriteWhole(const std::string& line);

  std::string path_;
  int fd_ = -1;
  std::atomic<int64_t> dropped_ = 0;
};

}  // namespace longhaul
