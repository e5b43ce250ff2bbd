#include "core/event_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/fs.h"

namespace longhaul {

using nlohmann::json;

EventWriter EventWriter::FromEnv() {
  const char* path = std::getenv("LONGHAUL_EVENTS");
  if (path == nullptr || *path == '\0') return EventWriter();
  auto w = Open(path);
  if (!w.ok()) return EventWriter();
  return std::move(*w);
}

Result<EventWriter> EventWriter::Open(const std::string& path) {
  if (path.empty()) return EventWriter();
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open events file", path, errno);
  return EventWriter(fd);
}

EventWriter::EventWriter(EventWriter&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

EventWriter& EventWriter::operator=(EventWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

EventWriter::~EventWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void EventWriter::WriteLine(const std::string& line) {
  if (fd_ < 0) return;
  std::string buf = line;
  buf.push_back('\n');
  std::lock_guard<std::mutex> lock(mu_);
  size_t off = 0;
  while (off < buf.size()) {
    ssize_t n = ::write(fd_, buf.data() + off, buf.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // events are best effort for the stage; the agent counts what arrives
    }
    off += static_cast<size_t>(n);
  }
}

void EventWriter::Progress(double done, std::optional<double> total, std::string_view unit) {
  if (fd_ < 0) return;
  json body = {{"done", done}};
  if (total) body["total"] = *total;
  if (!unit.empty()) body["unit"] = unit;
  WriteLine(json{{"progress", body}}.dump(-1, ' ', false, json::error_handler_t::replace));
}

void EventWriter::Metric(std::string_view name, double value, std::optional<int64_t> step) {
  if (fd_ < 0) return;
  json body = {{"name", name}, {"value", value}};
  if (step) body["step"] = *step;
  WriteLine(json{{"metric", body}}.dump(-1, ' ', false, json::error_handler_t::replace));
}

void EventWriter::Output(std::string_view name, std::string_view value) {
  if (fd_ < 0) return;
  WriteLine(json{{"output", {{"name", name}, {"value", value}}}}.dump(
      -1, ' ', false, json::error_handler_t::replace));
}

void EventWriter::Artifact(std::string_view name, std::string_view path,
                           std::optional<int64_t> bytes) {
  if (fd_ < 0) return;
  json body = {{"name", name}, {"path", path}};
  if (bytes) body["bytes"] = *bytes;
  WriteLine(json{{"artifact", body}}.dump(-1, ' ', false, json::error_handler_t::replace));
}

void EventWriter::Checkpoint(std::string_view path, std::optional<int64_t> step) {
  if (fd_ < 0) return;
  json body = {{"path", path}};
  if (step) body["step"] = *step;
  WriteLine(json{{"checkpoint", body}}.dump(-1, ' ', false, json::error_handler_t::replace));
}

void EventWriter::Ready() {
  if (fd_ < 0) return;
  WriteLine(R"({"ready":{}})");
}

void EventWriter::Message(std::string_view level, std::string_view text) {
  if (fd_ < 0) return;
  WriteLine(json{{"message", {{"level", level}, {"text", text}}}}.dump(
      -1, ' ', false, json::error_handler_t::replace));
}

void EventWriter::GpuFault(int gpu, std::string_view uuid, std::string_view reason) {
  if (fd_ < 0) return;
  json body = {{"gpu", gpu}, {"reason", reason}};
  if (!uuid.empty()) body["uuid"] = uuid;
  WriteLine(json{{"gpu_fault", body}}.dump(-1, ' ', false, json::error_handler_t::replace));
}

void EventWriter::Raw(std::string_view line) { WriteLine(std::string(line)); }

}  // namespace longhaul
