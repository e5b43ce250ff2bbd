#include "agent/lib/event_tailer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {
namespace {

constexpr size_t kChunk = 1 << 16;

bool IsBlank(std::string_view s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

std::string OversizeLine(int64_t seq, int64_t bytes) {
  nlohmann::json ev = {{"message",
                        {{"level", "error"},
                         {"text", StrCat("longhaul-agent: event line ", seq, " is ", bytes,
                                         " bytes, over the limit of ", EventTailer::kMaxLineBytes,
                                         " bytes; it was dropped")}}}};
  return ev.dump();
}

}  // namespace

EventTailer::EventTailer(std::string path, int64_t offset, int64_t seq)
    : path_(std::move(path)), offset_(offset), seq_(seq), scanned_to_(offset) {}

EventTailer::~EventTailer() {
  if (fd_ >= 0) ::close(fd_);
}

void EventTailer::Rewind(int64_t offset, int64_t seq) {
  offset_ = offset;
  seq_ = seq;
  scanned_to_ = offset;
}

Status EventTailer::EnsureOpen() {
  if (fd_ >= 0) return OkStatus();
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    int err = errno;
    fd_ = -1;
    if (err == ENOENT) return absl::NotFoundError(path_);
    return ErrnoStatus("open", path_, err);
  }
  return OkStatus();
}

Result<EventBatch> EventTailer::Read(size_t max_lines, size_t max_bytes, bool final) {
  EventBatch batch;
  Status open = EnsureOpen();
  if (absl::IsNotFound(open)) {
    batch.at_end = true;
    return batch;
  }
  RETURN_IF_ERROR(open);

  size_t bytes = 0;
  std::string buf;  // file content from buf_start on
  // A partial line already known to be over the limit is not read again from its start.
  int64_t buf_start = scanned_to_ - offset_ > kMaxLineBytes ? scanned_to_ : offset_;
  bool eof = false;
  while (batch.lines.size() < max_lines && bytes < max_bytes) {
    if (offset_ - buf_start > static_cast<int64_t>(kChunk)) {
      buf.erase(0, static_cast<size_t>(offset_ - buf_start));
      buf_start = offset_;
    }
    // Find the next newline at or after offset_, reading more as needed.
    size_t nl = buf.find('\n', offset_ > buf_start ? static_cast<size_t>(offset_ - buf_start) : 0);
    while (nl == std::string::npos && !eof) {
      // Keep memory bounded for a runaway line: drop what we know has no newline.
      int64_t have_end = buf_start + static_cast<int64_t>(buf.size());
      if (have_end - offset_ > kMaxLineBytes) {
        buf.clear();
        buf_start = have_end;
      }
      char chunk[kChunk];
      ssize_t n = ::pread(fd_, chunk, sizeof chunk, buf_start + static_cast<int64_t>(buf.size()));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus("read", path_, errno);
      }
      if (n == 0) {
        eof = true;
        break;
      }
      size_t old = buf.size();
      buf.append(chunk, static_cast<size_t>(n));
      nl = buf.find('\n', old);
    }
    int64_t line_end;  // offset just after the line (after its '\n', if any)
    if (nl != std::string::npos) {
      line_end = buf_start + static_cast<int64_t>(nl) + 1;
    } else {
      int64_t file_end = buf_start + static_cast<int64_t>(buf.size());
      if (!final || file_end == offset_) {
        scanned_to_ = std::max(scanned_to_, file_end);
        batch.at_end = true;
        break;
      }
      line_end = file_end;  // the writer has ended: its last line needs no '\n'
    }
    int64_t seq = seq_ + 1;
    int64_t length = line_end - offset_ - (nl != std::string::npos ? 1 : 0);
    if (offset_ < buf_start || length > kMaxLineBytes) {
      batch.lines.push_back({seq, OversizeLine(seq, length), line_end});
    } else {
      std::string_view text(buf.data() + (offset_ - buf_start), static_cast<size_t>(length));
      if (!IsBlank(text)) {
        if (text.back() == '\r') text.remove_suffix(1);
        batch.lines.push_back({seq, std::string(text), line_end});
        bytes += text.size();
      }
    }
    seq_ = seq;
    offset_ = line_end;
    scanned_to_ = offset_;
  }
  if (!batch.at_end && eof && buf_start + static_cast<int64_t>(buf.size()) == offset_) {
    batch.at_end = true;
  }
  return batch;
}

}  // namespace longhaul::agent
