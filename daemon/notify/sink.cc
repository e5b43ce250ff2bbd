#include "daemon/notify/sink.h"

#include <nlohmann/json.hpp>
#include <set>

#include "core/command.h"
#include "core/net/http_client.h"
#include "core/net/url.h"
#include "core/strings.h"

namespace longhaul::notify {
namespace {

constexpr size_t kErrorSnippet = 200;  // of an answer's body or a command's stderr

std::string Snippet(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > kErrorSnippet) text = text.substr(0, kErrorSnippet) + "...";
  return text;
}

}  // namespace

std::string SinkJson(const Sink& sink) {
  nlohmann::ordered_json j;
  if (sink.is_command()) {
    j["command"] = sink.argv;
  } else {
    j["webhook"] = sink.url;
    j["format"] = sink.format;
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<Sink> ParseSink(const std::string& json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  Sink sink;
  if (j.is_object() && j.contains("command") && j["command"].is_array()) {
    for (const auto& a : j["command"]) {
      if (!a.is_string()) break;
      sink.argv.push_back(a.get<std::string>());
    }
    if (!sink.argv.empty() && sink.argv.size() == j["command"].size()) return sink;
  } else if (j.is_object() && j.contains("webhook") && j["webhook"].is_string()) {
    sink.url = j["webhook"].get<std::string>();
    if (j.contains("format") && j["format"].is_string()) {
      sink.format = j["format"].get<std::string>();
    }
    return sink;
  }
  return absl::InvalidArgumentError(StrCat("not a notification sink: ", Snippet(json)));
}

std::string SinkLabel(const Sink& sink) {
  if (sink.is_command()) return StrCat("command ", CommandLine(sink.argv));
  return StrCat("webhook ", sink.url, sink.format == "json" ? "" : StrCat(" (", sink.format, ")"));
}

std::vector<Sink> SinksOf(const workflow::NotifySpec& spec) {
  std::vector<Sink> sinks;
  for (const std::string& url : spec.webhooks) sinks.push_back(Sink{url, spec.format, {}});
  if (!spec.command.empty()) sinks.push_back(Sink{"", "json", spec.command});
  return sinks;
}

std::vector<store::NotificationRow> PlanNotifications(const Event& event,
                                                      const workflow::NotifySpec& daemon,
                                                      const workflow::NotifySpec* workflow,
                                                      const std::string& ui_base) {
  std::vector<store::NotificationRow> rows;
  std::set<std::string> seen;
  for (const workflow::NotifySpec* spec : {&daemon, workflow}) {
    if (spec == nullptr || !spec->Wants(event.kind)) continue;
    for (const Sink& sink : SinksOf(*spec)) {
      std::string json = SinkJson(sink);
      if (!seen.insert(json).second) continue;
      store::NotificationRow& row = rows.emplace_back();
      row.kind = event.kind;
      if (event.run_id > 0) row.run_id = event.run_id;
      row.stage = event.stage;
      row.sink = std::move(json);
      row.payload = !sink.is_command() && sink.format == "slack" ? SlackJson(event, ui_base)
                                                                 : EventJson(event, ui_base);
      row.next_try_at_ms = event.time_ms;
      row.created_at_ms = event.time_ms;
    }
  }
  return rows;
}

Status HttpCommandDeliverer::Deliver(const Sink& sink, const std::string& kind,
                                     const std::string& body) {
  if (sink.is_command()) {
    CommandInput input;
    input.stdin_data = body;
    input.env["LONGHAUL_EVENT"] = kind;
    ASSIGN_OR_RETURN(CommandResult r, RunCommand(sink.argv, timeout_ms_, input));
    if (r.exit_code == 0) return OkStatus();
    std::string err = Snippet(r.err);
    return absl::UnavailableError(StrCat("exit ", r.exit_code, err.empty() ? "" : ": ", err));
  }
  ASSIGN_OR_RETURN(net::HttpUrl url, net::ParseHttpUrl(sink.url, {.what = "webhook"}));
  net::HttpRequest request;
  request.method = "POST";
  request.target = url.RequestTarget();
  request.body = body;
  request.headers.push_back({"User-Agent", "longhauld"});
  request.timeouts.connect_ms = timeout_ms_;
  request.timeouts.total_ms = timeout_ms_;
  request.body_limit = 1 << 20;  // only a snippet of the answer is kept
  Result<net::HttpResult> r = net::HttpFetch(url, std::move(request), {.ca_file = ca_file_});
  if (!r.ok()) return r.status();
  if (r->status() >= 200 && r->status() < 300) return OkStatus();
  std::string answer = Snippet(r->body);
  return absl::UnavailableError(StrCat("HTTP ", r->status(), answer.empty() ? "" : ": ", answer));
}

}  // namespace longhaul::notify
