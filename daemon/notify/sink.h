// Where a notification goes (a webhook or a command), how a sink is stored with each
// notification (as JSON, so a restart sends it where it was meant to go), and the delivery of
// one body to one sink.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "daemon/notify/event.h"
#include "daemon/store/rows.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::notify {

struct Sink {
  std::string url;                // a webhook: POST the body here
  std::string format = "json";    // of a webhook's body: json or slack
  std::vector<std::string> argv;  // a command: run it with the body on stdin
  bool is_command() const { return !argv.empty(); }
};

// {"webhook": URL, "format": F} or {"command": [argv]}.
std::string SinkJson(const Sink& sink);
// InvalidArgument naming the text when it is not what SinkJson writes.
Result<Sink> ParseSink(const std::string& json);
// "webhook http://h/x (slack)", "command notify-me --team ml": for people.
std::string SinkLabel(const Sink& sink);
// One sink per webhook and one for the command.
std::vector<Sink> SinksOf(const workflow::NotifySpec& spec);

// The notifications one event makes: a row per sink of `daemon` and of `workflow` (may be
// null) that wants the event's kind, a sink named by both once. Rows are pending, due at
// `event.time_ms`, with the body their sink is sent.
std::vector<store::NotificationRow> PlanNotifications(const Event& event,
                                                      const workflow::NotifySpec& daemon,
                                                      const workflow::NotifySpec* workflow,
                                                      const std::string& ui_base);

// Sends one body to one sink, once. Implementations must be thread-safe.
class Deliverer {
 public:
  virtual ~Deliverer() = default;
  // OK when the sink took it: a 2xx answer, or a command that exited 0. Otherwise the error
  // says what happened ("HTTP 500: ...", "exit 3: ...", "connection refused").
  virtual Status Deliver(const Sink& sink, const std::string& kind, const std::string& body) = 0;
};

// Webhooks over plain HTTP or HTTPS (core/net's HttpFetch; the certificate checked against
// `ca_file`, or the system's CA store when it is ""), and commands (core's
// RunCommand, the body on stdin and LONGHAUL_EVENT=kind in the environment), each bounded by
// `timeout_ms`.
class HttpCommandDeliverer : public Deliverer {
 public:
  explicit HttpCommandDeliverer(int64_t timeout_ms = 30'000, std::string ca_file = "")
      : timeout_ms_(timeout_ms), ca_file_(std::move(ca_file)) {}
  Status Deliver(const Sink& sink, const std::string& kind, const std::string& body) override;

 private:
  int64_t timeout_ms_;
  std::string ca_file_;
};

}  // namespace longhaul::notify
