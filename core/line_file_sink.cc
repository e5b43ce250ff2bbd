#include "core/line_file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace longhaul {

LineFileSink::LineFileSink(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) spdlog::throw_spdlog_ex("cannot open log file " + path, errno);
}

LineFileSink::~LineFileSink() {
  if (fd_ >= 0) ::close(fd_);
}

int LineFileSink::WriteWhole(const std::string& line) {
  ssize_t n;
  do {
    n = ::write(fd_, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(line.size())) return 0;
  int err = n < 0 ? errno : ENOSPC;  // a short write: only part of it fit
  if (n > 0) {
    // Take the part back: the file ends with a whole line, as before.
    off_t end = ::lseek(fd_, 0, SEEK_END);
    if (end >= n && ::ftruncate(fd_, end - n) != 0) err = errno;
  }
  return err;
}

void LineFileSink::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t buf;
  formatter_->format(msg, buf);
  std::string line(buf.data(), buf.size());
  if (dropped_ > 0) {
    // The note and the line go together, in one write: a disk that has room for a short note
    // only does not get one note per dropped line.
    line.insert(0, "-- " + std::to_string(dropped_.load()) +
                       " log line(s) dropped: could not write " + path_ + " (disk full?)\n");
  }
  if (WriteWhole(line) == 0) {
    dropped_ = 0;
    return;
  }
  ++dropped_;
}

}  // namespace longhaul
