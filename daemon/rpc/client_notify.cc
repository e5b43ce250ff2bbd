// Notifications as clients see them: the list of deliveries, and a sample sent on request.
#include "core/strings.h"
#include "daemon/rpc/client_api.h"
#include "daemon/rpc/client_audit.h"

namespace longhaul::rpc {
namespace {

v1::Notification ToProto(const store::NotificationRow& row) {
  v1::Notification n;
  n.set_id(row.id);
  n.set_kind(row.kind);
  n.set_run_id(row.run_id.value_or(0));
  n.set_stage(row.stage);
  Result<notify::Sink> sink = notify::ParseSink(row.sink);
  n.set_sink(sink.ok() ? notify::SinkLabel(*sink) : row.sink);
  n.set_state(row.state);
  n.set_tries(row.tries);
  n.set_last_error(row.last_error);
  n.set_next_try_at_ms(row.next_try_at_ms.value_or(0));
  n.set_created_at_ms(row.created_at_ms);
  n.set_delivered_at_ms(row.delivered_at_ms.value_or(0));
  n.set_payload(row.payload);
  return n;
}

}  // namespace

Result<v1::ListNotificationsResponse> ClientApi::ListNotifications(
    const v1::ListNotificationsRequest& req) {
  int limit = req.limit() > 0 ? req.limit() : 50;
  ASSIGN_OR_RETURN(std::vector<store::NotificationRow> rows,
                   store_->ListNotifications(req.run_id(), req.before_id(), limit));
  v1::ListNotificationsResponse resp;
  for (const auto& row : rows) *resp.add_notifications() = ToProto(row);
  return resp;
}

Result<v1::TestNotifyResponse> ClientApi::TestNotify(const v1::TestNotifyRequest& req) {
  if (notify_.deliverer == nullptr) {
    return absl::UnavailableError("this longhauld sends no notifications");
  }
  workflow::NotifySpec spec;
  for (const auto& url : req.webhooks()) spec.webhooks.push_back(url);
  for (const auto& arg : req.command()) spec.command.push_back(arg);
  if (!req.format().empty()) spec.format = req.format();
  if (spec.empty()) {
    spec = notify_.daemon_spec;
    spec.on.clear();
    if (spec.empty()) {
      return absl::FailedPreconditionError(
          "longhauld has no notification sinks (--notify-webhook, --notify-command): name one "
          "with --webhook or --command");
    }
  } else {
    RETURN_IF_ERROR(workflow::CheckNotifySpec(spec, "notify test"));
    if (!spec.command.empty() && !notify_.allow_commands) {
      return absl::FailedPreconditionError(
          "a command sink runs on longhauld's host: longhauld allows a command from a client "
          "only with --notify-allow-commands");
    }
  }
  notify::Event sample;
  sample.kind = "test";
  sample.reason = "a test notification from `longhaul notify test`";
  sample.time_ms = clock_->NowMs();
  v1::TestNotifyResponse resp;
  for (const notify::Sink& sink : notify::SinksOf(spec)) {
    std::string body = !sink.is_command() && sink.format == "slack"
                           ? notify::SlackJson(sample, notify_.ui_base)
                           : notify::EventJson(sample, notify_.ui_base);
    Status st = notify_.deliverer->Deliver(sink, sample.kind, body);
    auto* d = resp.add_deliveries();
    d->set_sink(notify::SinkLabel(sink));
    d->set_ok(st.ok());
    d->set_error(ToStd(st.message()));
  }
  return resp;
}

AuditSubject DescribeForAudit(const v1::TestNotifyRequest& req, const v1::TestNotifyResponse&) {
  std::vector<std::string> sinks(req.webhooks().begin(), req.webhooks().end());
  if (req.command_size() > 0) {
    sinks.push_back(StrJoin(std::vector<std::string>(req.command().begin(), req.command().end()),
                            " "));
  }
  return {"notifications", sinks.empty() ? "longhauld's sinks" : StrJoin(sinks, ", ")};
}

}  // namespace longhaul::rpc
