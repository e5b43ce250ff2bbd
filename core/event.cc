#include "core/event.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace longhaul {
namespace {

using nlohmann::json;

Status Bad(std::string_view what) { return absl::InvalidArgumentError(std::string(what)); }

Result<double> Number(const json& obj, const char* event, const char* key, bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Bad(StrCat(event, ".", key, ": missing"));
    return 0.0;
  }
  if (!it->is_number()) return Bad(StrCat(event, ".", key, ": expected a number"));
  double v = it->get<double>();
  // A literal beyond the range of a double (1e999) parses as infinity.
  if (!std::isfinite(v)) return Bad(StrCat(event, ".", key, ": out of range"));
  return v;
}

// A count: a number from 0 to kMaxEventCount (`whole`: without a fractional part).
Result<double> Count(const json& obj, const char* event, const char* key, bool whole) {
  ASSIGN_OR_RETURN(double v, Number(obj, event, key, true));
  if (v < 0 || v > kMaxEventCount) {
    return Bad(StrCat(event, ".", key, ": ", v, " is out of range (0 to 2^53)"));
  }
  if (whole && v != std::floor(v)) {
    return Bad(StrCat(event, ".", key, ": ", v, " is not a whole number"));
  }
  return v;
}

// An optional whole count; nullopt when absent or null.
Result<std::optional<int64_t>> OptionalCount(const json& obj, const char* event, const char* key) {
  if (!obj.contains(key) || obj[key].is_null()) return std::optional<int64_t>();
  ASSIGN_OR_RETURN(double v, Count(obj, event, key, /*whole=*/true));
  return std::optional<int64_t>(static_cast<int64_t>(v));
}

Result<std::string> String(const json& obj, const char* event, const char* key, bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Bad(StrCat(event, ".", key, ": missing"));
    return std::string();
  }
  if (!it->is_string()) return Bad(StrCat(event, ".", key, ": expected a string"));
  return it->get<std::string>();
}

}  // namespace

std::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kProgress:
      return "progress";
    case EventType::kMetric:
      return "metric";
    case EventType::kOutput:
      return "output";
    case EventType::kArtifact:
      return "artifact";
    case EventType::kCheckpoint:
      return "checkpoint";
    case EventType::kReady:
      return "ready";
    case EventType::kMessage:
      return "message";
    case EventType::kGpuFault:
      return "gpu_fault";
  }
  return "?";
}

Result<StageEvent> ParseEventLine(std::string_view line) {
  json doc = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Bad("not valid JSON");
  if (!doc.is_object()) return Bad("expected a JSON object");
  if (doc.size() != 1) return Bad("expected exactly one key naming the event");
  const std::string& key = doc.begin().key();
  const json& body = doc.begin().value();
  if (!body.is_object()) return Bad(StrCat(key, ": expected an object"));
  StageEvent ev;
  if (key == "progress") {
    ev.type = EventType::kProgress;
    ASSIGN_OR_RETURN(ev.done, Count(body, "progress", "done", /*whole=*/false));
    if (body.contains("total") && !body["total"].is_null()) {
      ASSIGN_OR_RETURN(double total, Count(body, "progress", "total", /*whole=*/false));
      ev.total = total;
    }
    ASSIGN_OR_RETURN(ev.unit, String(body, "progress", "unit", false));
  } else if (key == "metric") {
    ev.type = EventType::kMetric;
    ASSIGN_OR_RETURN(ev.name, String(body, "metric", "name", true));
    ASSIGN_OR_RETURN(ev.value, Number(body, "metric", "value", true));
    ASSIGN_OR_RETURN(ev.step, OptionalCount(body, "metric", "step"));
  } else if (key == "output") {
    ev.type = EventType::kOutput;
    ASSIGN_OR_RETURN(ev.name, String(body, "output", "name", true));
    auto it = body.find("value");
    if (it == body.end()) return Bad("output.value: missing");
    ev.text = it->is_string() ? it->get<std::string>() : it->dump();
  } else if (key == "artifact") {
    ev.type = EventType::kArtifact;
    ASSIGN_OR_RETURN(ev.name, String(body, "artifact", "name", true));
    ASSIGN_OR_RETURN(ev.path, String(body, "artifact", "path", true));
    ASSIGN_OR_RETURN(ev.bytes, OptionalCount(body, "artifact", "bytes"));
  } else if (key == "checkpoint") {
    ev.type = EventType::kCheckpoint;
    ASSIGN_OR_RETURN(ev.path, String(body, "checkpoint", "path", true));
    ASSIGN_OR_RETURN(ev.step, OptionalCount(body, "checkpoint", "step"));
  } else if (key == "ready") {
    ev.type = EventType::kReady;
  } else if (key == "message") {
    ev.type = EventType::kMessage;
    ASSIGN_OR_RETURN(ev.text, String(body, "message", "text", true));
    ASSIGN_OR_RETURN(ev.level, String(body, "message", "level", false));
    if (ev.level.empty()) ev.level = "info";
    if (ev.level != "debug" && ev.level != "info" && ev.level != "warn" && ev.level != "error") {
      return Bad(StrCat("message.level: '", ev.level, "' is not one of debug, info, warn, error"));
    }
  } else if (key == "gpu_fault") {
    ev.type = EventType::kGpuFault;
    ASSIGN_OR_RETURN(ev.gpu, OptionalCount(body, "gpu_fault", "gpu"));
    ASSIGN_OR_RETURN(ev.uuid, String(body, "gpu_fault", "uuid", false));
    ASSIGN_OR_RETURN(ev.text, String(body, "gpu_fault", "reason", true));
    if (!ev.gpu && ev.uuid.empty()) return Bad("gpu_fault: give the GPU as gpu or uuid");
    if (ev.text.empty()) return Bad("gpu_fault.reason: empty");
  } else {
    return Bad(StrCat("unknown event '", key,
                      "' (expected progress, metric, output, artifact, checkpoint, ready, "
                      "message or gpu_fault)"));
  }
  return ev;
}

}  // namespace longhaul
