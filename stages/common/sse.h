// Server-sent events (the WHATWG "text/event-stream" format) as OpenAI-compatible servers
// stream them: "data:" lines, events ended by a blank line, lines starting with ':' are
// comments, CRLF / LF / CR line ends, bytes split anywhere between Feed() calls.
//
// The "[DONE]" sentinel is not special here: it arrives as an event whose data is "[DONE]";
// openai.h gives it its meaning. Not thread-safe; one parser per response.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul::stages {

struct SseEvent {
  std::string event;  // "event:" field; empty means "message"
  std::string data;   // "data:" lines joined with '\n'
  std::string id;     // "id:" field
};

class SseParser {
 public:
  using Callback = std::function<void(const SseEvent&)>;

  // `on_event` is called once per complete event that has at least one data line.
  explicit SseParser(Callback on_event, size_t max_line_bytes = 64 << 20)
      : on_event_(std::move(on_event)), max_line_(max_line_bytes) {}

  // Feeds the next bytes of the body. Fails (and stays failed) only when one line grows
  // past max_line_bytes: a server that never sends a line end.
  Status Feed(std::string_view bytes);

  // End of the body. An event not closed by a blank line is still delivered: servers that
  // end the stream right after "data: [DONE]\n" are common, and dropping it would lose data.
  void Finish();

  size_t events() const { return events_; }

 private:
  void Line(std::string_view line);
  void Dispatch();

  Callback on_event_;
  size_t max_line_;
  std::string partial_;   // an unterminated line carried between Feed() calls
  bool skip_lf_ = false;  // the last byte was '\r': a '\n' right after it ends nothing
  bool has_data_ = false;
  SseEvent cur_;
  size_t events_ = 0;
  Status status_;
};

}  // namespace longhaul::stages
