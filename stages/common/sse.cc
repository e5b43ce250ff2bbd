#include "stages/common/sse.h"

#include "core/strings.h"

namespace longhaul::stages {
namespace {

// string_view::find_first_of calls memchr over the needle once per byte of the haystack;
// this runs for every byte of every stream, so scan directly.
size_t FindLineEnd(std::string_view s, size_t from) {
  for (size_t i = from; i < s.size(); ++i) {
    if (s[i] == '\n' || s[i] == '\r') return i;
  }
  return std::string_view::npos;
}

}  // namespace

Status SseParser::Feed(std::string_view bytes) {
  if (!status_.ok()) return status_;
  size_t i = 0;
  if (skip_lf_ && !bytes.empty()) {
    if (bytes[0] == '\n') i = 1;
    skip_lf_ = false;
  }
  while (i < bytes.size()) {
    size_t end = FindLineEnd(bytes, i);
    if (end == std::string_view::npos) {
      partial_.append(bytes.substr(i));
      if (partial_.size() > max_line_) {
        status_ = absl::ResourceExhaustedError(
            StrCat("event stream: a line longer than ", max_line_, " bytes"));
        return status_;
      }
      return OkStatus();
    }
    if (partial_.empty()) {
      Line(bytes.substr(i, end - i));
    } else {
      partial_.append(bytes.substr(i, end - i));
      Line(partial_);
      partial_.clear();
    }
    if (bytes[end] == '\r') {
      if (end + 1 < bytes.size()) {
        i = bytes[end + 1] == '\n' ? end + 2 : end + 1;
      } else {
        skip_lf_ = true;
        i = end + 1;
      }
    } else {
      i = end + 1;
    }
  }
  return OkStatus();
}

void SseParser::Finish() {
  if (!partial_.empty()) {
    std::string last;
    last.swap(partial_);
    Line(last);
  }
  Dispatch();
}

void SseParser::Line(std::string_view line) {
  if (line.empty()) {
    Dispatch();
    return;
  }
  if (line[0] == ':') return;  // comment (keep-alive pings)
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) cur_.data.push_back('\n');
    cur_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    cur_.event.assign(value);
  } else if (field == "id") {
    cur_.id.assign(value);
  }
  // "retry" and unknown fields are ignored, as the format says.
}

void SseParser::Dispatch() {
  if (has_data_) {
    ++events_;
    on_event_(cur_);
  }
  cur_.data.clear();
  cur_.event.clear();
  has_data_ = false;
}

}  // namespace longhaul::stages
