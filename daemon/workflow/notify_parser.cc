#include "daemon/workflow/notify_parser.h"

#include <algorithm>
#include <iterator>

#include "core/net/url.h"
#include "core/strings.h"

namespace longhaul::workflow {
namespace {

const std::vector<std::string> kNotifyKeys = {"on", "webhook", "format", "command"};

std::vector<std::string> EventNames() {
  return std::vector<std::string>(std::begin(kNotifyEvents), std::end(kNotifyEvents));
}

bool IsEvent(std::string_view kind) {
  return std::find(std::begin(kNotifyEvents), std::end(kNotifyEvents), kind) !=
         std::end(kNotifyEvents);
}

// "'URL': PROBLEM" from the parser longhauld's notifier sends with, so a URL it would refuse
// is refused here, before anything waits for delivery.
Status CheckWebhookUrl(std::string_view url) {
  return net::ParseHttpUrl(url, {.what = ""}).status();
}

std::string KindProblem(std::string_view kind) {
  return StrCat("unknown event '", kind, "'", DidYouMean(kind, EventNames()), "; the events are ",
                StrJoin(EventNames(), ", "));
}

}  // namespace

Status CheckNotifySpec(const NotifySpec& spec, std::string_view where) {
  for (const std::string& kind : spec.on) {
    if (!IsEvent(kind)) return absl::InvalidArgumentError(StrCat(where, ": ", KindProblem(kind)));
  }
  for (const std::string& url : spec.webhooks) {
    if (Status s = CheckWebhookUrl(url); !s.ok()) {
      return absl::InvalidArgumentError(StrCat(where, ": ", s.message()));
    }
  }
  if (spec.format != "json" && spec.format != "slack") {
    return absl::InvalidArgumentError(
        StrCat(where, ": format '", spec.format, "': expected json or slack"));
  }
  return OkStatus();
}

void ReadNotify(const MapEntry& e, NotifySpec* out, Diagnostics& diag) {
  if (!ExpectMap(e, "notify", diag)) return;
  for (const MapEntry& k : ReadMap(e.value, "notify", "key", &kNotifyKeys, diag)) {
    if (k.key == "on") {
      auto kinds = ReadScalarList(k, "notify.on", diag);
      if (!kinds) continue;
      for (const Scalar& kind : *kinds) {
        if (!IsEvent(kind.text)) {
          diag.Add(kind.pos, StrCat("notify.on: ", KindProblem(kind.text)));
          continue;
        }
        out->on.push_back(kind.text);
      }
    } else if (k.key == "webhook") {
      std::vector<Scalar> urls;
      if (k.value.IsSequence()) {
        if (auto list = ReadScalarList(k, "notify.webhook", diag)) urls = *list;
      } else if (auto url = ReadScalar(k, "notify.webhook", diag)) {
        urls.push_back(*url);
      }
      for (const Scalar& url : urls) {
        if (Status s = CheckWebhookUrl(url.text); !s.ok()) {
          diag.Add(url.pos, StrCat("notify.webhook: ", s.message()));
          continue;
        }
        out->webhooks.push_back(url.text);
      }
    } else if (k.key == "format") {
      auto format = ReadScalar(k, "notify.format", diag);
      if (!format) continue;
      if (format->text != "json" && format->text != "slack") {
        diag.Add(format->pos,
                 StrCat("notify.format: expected json or slack, got '", format->text, "'"));
        continue;
      }
      out->format = format->text;
    } else if (k.key == "command") {
      auto argv = ReadScalarList(k, "notify.command", diag);
      if (!argv) continue;
      if (argv->empty()) {
        diag.Add(k.value_pos, "notify.command: expected the program and its arguments, got []");
        continue;
      }
      for (const Scalar& a : *argv) out->command.push_back(a.text);
    }
  }
  if (out->empty() && diag.empty()) {
    diag.Add(e.key_pos, "notify: expected a webhook or a command to send notifications to");
  }
}

}  // namespace longhaul::workflow
