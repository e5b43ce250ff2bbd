#include "core/event.h"

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
  return it->get<double>();
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
    case EventType::kProgress: return "progress";
    case EventType::kMetric: return "metric";
    case EventType::kOutput: return "output";
    case EventType::kArtifact: return "artifact";
    case EventType::kCheckpoint: return "checkpoint";
    case EventType::kReady: return "ready";
    case EventType::kMessage: return "message";
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
    ASSIGN_OR_RETURN(ev.done, Number(body, "progress", "done", true));
    if (body.contains("total") && !body["total"].is_null()) {
      ASSIGN_OR_RETURN(double total, Number(body, "progress", "total", true));
      ev.total = total;
    }
    ASSIGN_OR_RETURN(ev.unit, String(body, "progress", "unit", false));
  } else if (key == "metric") {
    ev.type = EventType::kMetric;
    ASSIGN_OR_RETURN(ev.name, String(body, "metric", "name", true));
    ASSIGN_OR_RETURN(ev.value, Number(body, "metric", "value", true));
    if (body.contains("step") && !body["step"].is_null()) {
      ASSIGN_OR_RETURN(double step, Number(body, "metric", "step", true));
      ev.step = static_cast<int64_t>(step);
    }
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
    if (body.contains("bytes") && !body["bytes"].is_null()) {
      ASSIGN_OR_RETURN(double bytes, Number(body, "artifact", "bytes", true));
      ev.bytes = static_cast<int64_t>(bytes);
    }
  } else if (key == "checkpoint") {
    ev.type = EventType::kCheckpoint;
    ASSIGN_OR_RETURN(ev.path, String(body, "checkpoint", "path", true));
    if (body.contains("step") && !body["step"].is_null()) {
      ASSIGN_OR_RETURN(double step, Number(body, "checkpoint", "step", true));
      ev.step = static_cast<int64_t>(step);
    }
  } else if (key == "ready") {
    ev.type = EventType::kReady;
  } else if (key == "message") {
    ev.type = EventType::kMessage;
    ASSIGN_OR_RETURN(ev.text, String(body, "message", "text", true));
    ASSIGN_OR_RETURN(ev.level, String(body, "message", "level", false));
    if (ev.level.empty()) ev.level = "info";
    if (ev.level != "debug" && ev.level != "info" && ev.level != "warn" && ev.level != "error") {
      return Bad(StrCat("message.level: '", ev.level,
                              "' is not one of debug, info, warn, error"));
    }
  } else {
    return Bad(StrCat("unknown event '", key,
                            "' (expected progress, metric, output, artifact, checkpoint, ready "
                            "or message)"));
  }
  return ev;
}

}  // namespace longhaul
