// The numbers the docs state against the constants in the code: the limits table of
// docs/security.md, the workflow limits of docs/workflow-format.md, the retry and notification
// defaults, the HTTP, gRPC, log and event bounds. Changing one of these constants fails here
// until its docs say the same; each failure names the page, the line and the constant.
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/lib/agent_flags.h"
#include "agent/lib/event_tailer.h"
#include "cli/grpc_coordinator.h"
#include "core/duration.h"
#include "core/log_read.h"
#include "core/strings.h"
#include "daemon/http/metric_series.h"
#include "daemon/http/server.h"
#include "daemon/notify/outbox.h"
#include "daemon/server/coordinator.h"
#include "daemon/server/coordinator_flags.h"
#include "daemon/workflow/limits.h"
#include "daemon/workflow/workflow.h"
#include "proto/stage_merge.h"
#include "tests/docs/doc_numbers.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {
namespace {

// "kMaxWorkflowBytes = 33554432 (32 MiB)": a constant as the failure messages show it.
std::string SizeConstant(const std::string& name, int64_t bytes) {
  return StrCat(name, " = ", bytes, " (", DocBytes(bytes), ")");
}

// Expects cell `column` of the row `first` of `page` to start with `want`; `code` names the
// constant it comes from ("daemon/workflow/limits.h: kMaxStages = 200000").
void ExpectCellStartsWith(const DocPage& page, const std::string& first, size_t column,
                          const std::string& want, const std::string& code) {
  std::optional<DocRow> row = FindRow(page, first);
  ASSERT_TRUE(row.has_value()) << page.name << " has no table row '" << first << "' (for " << code
                               << ")";
  ASSERT_GT(row->cells.size(), column) << page.name << ":" << row->line;
  const std::string& cell = row->cells[column];
  EXPECT_TRUE(StartsWith(cell, want))
      << page.name << ":" << row->line << ": the row '" << first << "' says '" << cell
      << "'; it should say '" << want << "' (" << code << ")";
}

// Expects cell `column` of the row `first` to contain `want`.
void ExpectCellHas(const DocPage& page, const std::string& first, size_t column,
                   const std::string& want, const std::string& code) {
  std::optional<DocRow> row = FindRow(page, first);
  ASSERT_TRUE(row.has_value()) << page.name << " has no table row '" << first << "'";
  ASSERT_GT(row->cells.size(), column) << page.name << ":" << row->line;
  EXPECT_TRUE(row->cells[column].find(want) != std::string::npos)
      << page.name << ":" << row->line << ": the row '" << first << "' says '" << row->cells[column]
      << "'; it should say '" << want << "' (" << code << ")";
}

// A flag table's default (`--flag ARG` | `default` | ...) against the code's default.
void ExpectFlagDefault(const DocPage& page, const std::string& flag, const std::string& want,
                       const std::string& code) {
  ExpectCellStartsWith(page, flag, 1, StrCat("`", want, "`"), code);
}

// Expects the one passage that starts at `anchor` to say each of `wants`.
void ExpectPassageSays(const DocPage& page, const std::string& anchor,
                       const std::vector<std::string>& wants, const std::string& code) {
  std::vector<DocPassage> found = FindPassages(page, anchor);
  ASSERT_EQ(found.size(), 1u) << page.name << ": " << found.size() << " passages start with '"
                              << anchor << "'; the docs should say it once";
  for (const std::string& want : wants) {
    EXPECT_TRUE(found[0].text.find(want) != std::string::npos)
        << page.name << ":" << found[0].line << ": should say '" << want << "' (" << code
        << "); it says: " << found[0].text;
  }
}

// Every "BEFORE<number>AFTER" in `page` is `want`.
void ExpectEveryNumber(const DocPage& page, const std::string& before, const std::string& after,
                       int64_t want, const std::string& code) {
  for (const DocNumber& n : NumbersBetween(page, before, after)) {
    EXPECT_EQ(n.value, want) << page.name << ":" << n.line << ": says '" << before << n.value
                             << after << "'; " << code;
  }
}

int64_t DurationMs(const std::string& text) {
  Result<int64_t> ms = ParseDurationMs(text);
  EXPECT_TRUE(ms.ok()) << text << ": " << ms.status();
  return ms.ok() ? *ms : -1;
}

TEST(DocsNumbersTest, ReadsRowsPassagesAndNumbers) {
  EXPECT_EQ(DocBytes(32 << 20), "32 MiB");
  EXPECT_EQ(DocBytes(64 << 10), "64 KiB");
  EXPECT_EQ(DocBytes(int64_t{1} << 30), "1 GiB");
  EXPECT_EQ(DocBytes(1000), "1000 bytes");
  EXPECT_EQ(DocCount(200'000), "200,000");
  EXPECT_EQ(DocCount(1'024), "1,024");
  EXPECT_EQ(DocCount(256), "256");
  DocPage page{"x.md",
               {"| what | default |", "| --- | --- |", "| `--tries N` | `8` |", "",
                "- limits: a file of at most", "  32 MiB (over the limit of 200,000 stages).",
                "- next item"}};
  std::optional<DocRow> row = FindRow(page, "--tries N");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->line, 3);
  EXPECT_EQ(row->cells, (std::vector<std::string>{"`--tries N`", "`8`"}));
  EXPECT_FALSE(FindRow(page, "--tries").has_value());
  std::vector<DocPassage> passages = FindPassages(page, "limits:");
  ASSERT_EQ(passages.size(), 1u);
  EXPECT_EQ(passages[0].line, 5);
  EXPECT_EQ(passages[0].text,
            "- limits: a file of at most 32 MiB (over the limit of 200,000 stages).");
  std::vector<DocNumber> numbers = NumbersBetween(page, "over the limit of ", " stages");
  ASSERT_EQ(numbers.size(), 1u);
  EXPECT_EQ(numbers[0].line, 6);
  EXPECT_EQ(numbers[0].value, 200'000);
}

// docs/security.md, "Limits that protect the coordinator": what | default | where | past it.
TEST(DocsNumbersTest, SecurityLimitsTableMatchesTheCode) {
  DocPage page = LoadDocPage("docs/security.md");
  ASSERT_FALSE(page.lines.empty()) << "docs/security.md not found under " << SourceDir();
  using workflow::kMaxStages;
  using workflow::kMaxWorkflowBytes;
  const std::string limits = "daemon/workflow/limits.h: ";
  ExpectCellStartsWith(page, "a workflow file", 1, DocBytes(kMaxWorkflowBytes),
                       limits + SizeConstant("kMaxWorkflowBytes", kMaxWorkflowBytes));
  ExpectCellHas(
      page, "a workflow file", 3,
      StrCat("over the limit of ", kMaxWorkflowBytes, " bytes (", DocBytes(kMaxWorkflowBytes), ")"),
      limits + SizeConstant("kMaxWorkflowBytes", kMaxWorkflowBytes));
  ExpectCellStartsWith(page, "stages in one workflow", 1, DocCount(kMaxStages),
                       StrCat(limits, "kMaxStages = ", kMaxStages));
  ExpectCellHas(page, "stages in one workflow", 3,
                StrCat(kMaxStages + 1, " stages, over the limit of ", kMaxStages, " stages"),
                StrCat(limits, "kMaxStages = ", kMaxStages));

  ExpectCellStartsWith(page, "one event line", 1, DocBytes(agent::EventTailer::kMaxLineBytes),
                       "agent/lib/event_tailer.h: " +
                           SizeConstant("kMaxLineBytes", agent::EventTailer::kMaxLineBytes));
  agent::AgentFlags agent_flags;
  ExpectCellStartsWith(
      page, "events per attempt per second", 1, DocCount(agent_flags.max_event_rate),
      StrCat("agent/lib/agent_flags.h: max_event_rate = ", agent_flags.max_event_rate));
  ExpectCellStartsWith(
      page, "events in flight, unacknowledged", 1, DocCount(agent_flags.event_window),
      StrCat("agent/lib/agent_flags.h: event_window = ", agent_flags.event_window));
  ExpectCellStartsWith(page, "one log read", 1, DocBytes(kMaxLogReadBytes),
                       "core/log_read.h: " + SizeConstant("kMaxLogReadBytes", kMaxLogReadBytes));

  ExpectCellStartsWith(page, "a gRPC message to longhauld", 1,
                       DocBytes(server::kMaxGrpcReceiveBytes),
                       "daemon/server/coordinator.h: " +
                           SizeConstant("kMaxGrpcReceiveBytes", server::kMaxGrpcReceiveBytes));
  ExpectCellStartsWith(page, "a gRPC answer from longhauld", 1, DocBytes(server::kMaxGrpcSendBytes),
                       "daemon/server/coordinator.h: " +
                           SizeConstant("kMaxGrpcSendBytes", server::kMaxGrpcSendBytes));
  ExpectCellStartsWith(
      page, "a gRPC answer to the CLI / a request from it", 1,
      StrCat(DocBytes(cli::kMaxReceiveBytes), " / ", DocBytes(cli::kMaxSendBytes)),
      "cli/grpc_coordinator.h: " + SizeConstant("kMaxReceiveBytes", cli::kMaxReceiveBytes) + ", " +
          SizeConstant("kMaxSendBytes", cli::kMaxSendBytes));
  ExpectCellStartsWith(
      page, "stages in one answer or watch update", 1, DocCount(kMaxStagesPerMessage),
      StrCat("proto/stage_merge.h: kMaxStagesPerMessage = ", kMaxStagesPerMessage));

  http::HttpOptions http;
  ExpectCellStartsWith(
      page, "an HTTP request header", 1,
      StrCat(DocBytes(http.max_header_bytes), ", complete within ", http.header_timeout_ms / 1000,
             " s"),
      StrCat("daemon/http/server.h: ", SizeConstant("max_header_bytes", http.max_header_bytes),
             ", header_timeout_ms = ", http.header_timeout_ms));
  ExpectCellStartsWith(
      page, "an HTTP request body", 1, DocBytes(http.max_body_bytes),
      "daemon/http/server.h: " + SizeConstant("max_body_bytes", http.max_body_bytes));
  ExpectCellStartsWith(page, "open HTTP connections", 1, DocCount(http.max_connections),
                       StrCat("daemon/http/server.h: max_connections = ", http.max_connections));
  ExpectCellStartsWith(page, "open watch streams", 1, DocCount(http.sse.max_streams),
                       StrCat("daemon/http/sse_hub.h: max_streams = ", http.sse.max_streams));
}

// docs/workflow-format.md states the workflow limits once, in the list of what `validate`
// checks; every error message any page quotes has the limits of the code.
TEST(DocsNumbersTest, WorkflowLimitsAreTheCodesEverywhere) {
  using workflow::kMaxStages;
  using workflow::kMaxWorkflowBytes;
  const std::string code =
      StrCat("daemon/workflow/limits.h: ", SizeConstant("kMaxWorkflowBytes", kMaxWorkflowBytes),
             ", kMaxStages = ", kMaxStages);
  DocPage format = LoadDocPage("docs/workflow-format.md");
  ASSERT_FALSE(format.lines.empty());
  ExpectPassageSays(
      format, "limits that protect the coordinator",
      {StrCat("a workflow file of at most ", DocBytes(kMaxWorkflowBytes)),
       StrCat("over the limit of ", kMaxWorkflowBytes, " bytes (", DocBytes(kMaxWorkflowBytes),
              ") for a workflow file"),
       StrCat("at most ", DocCount(kMaxStages), " stages"),
       StrCat("over the limit of ", kMaxStages, " stages in one workflow"),
       StrCat("longhauld accepts messages of up to ", DocBytes(server::kMaxGrpcReceiveBytes)),
       StrCat("An event line a stage writes is at most ",
              DocBytes(agent::EventTailer::kMaxLineBytes))},
      code + ", kMaxGrpcReceiveBytes, kMaxLineBytes");

  int pages = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() + "/docs")) {
    if (entry.path().extension() != ".md") continue;
    DocPage page = LoadDocPage("docs/" + entry.path().filename().string());
    ExpectEveryNumber(page, "over the limit of ", " stages", kMaxStages, code);
    ExpectEveryNumber(page, "over the limit of ", " bytes (", kMaxWorkflowBytes, code);
    ++pages;
  }
  EXPECT_GT(pages, 10) << "the pages of " << SourceDir() << "/docs";
}

// Event lines, log reads: where docs/stage-protocol.md and docs/http-api.md state them.
TEST(DocsNumbersTest, EventLineAndLogReadBoundsMatchTheCode) {
  const int64_t line = agent::EventTailer::kMaxLineBytes;
  const std::string line_code = "agent/lib/event_tailer.h: " + SizeConstant("kMaxLineBytes", line);
  DocPage protocol = LoadDocPage("docs/stage-protocol.md");
  ExpectPassageSays(protocol, "A line longer than",
                    {StrCat("A line longer than ", DocBytes(line), " is not sent"),
                     StrCat("over the limit of ", line, " bytes)")},
                    line_code);

  DocPage api = LoadDocPage("docs/http-api.md");
  ExpectPassageSays(api, "The one bound on a log read",
                    {StrCat("The one bound on a log read: ", DocBytes(kMaxLogReadBytes)),
                     StrCat("the answer holds at most ", DocBytes(kMaxLogReadBytes)),
                     StrCat("`max_bytes` ≤ 0 means ", DocBytes(kDefaultLogReadBytes)),
                     StrCat("reads the log in ", DocBytes(kMaxLogReadBytes), " pages")},
                    "core/log_read.h: " + SizeConstant("kMaxLogReadBytes", kMaxLogReadBytes) +
                        ", " + SizeConstant("kDefaultLogReadBytes", kDefaultLogReadBytes));
}

// GET /metric-series's bounds, as docs/http-api.md ("One metric across runs") states them.
TEST(DocsNumbersTest, MetricSeriesBoundsMatchTheCode) {
  DocPage api = LoadDocPage("docs/http-api.md");
  const std::string code =
      StrCat("daemon/http/metric_series.h: kMaxSeriesRuns = ", http::kMaxSeriesRuns,
             ", kDefaultSeriesPoints = ", http::kDefaultSeriesPoints,
             ", kMaxSeriesPoints = ", http::kMaxSeriesPoints,
             ", kMaxScannedPoints = ", http::kMaxScannedPoints);
  ExpectPassageSays(api, "- `runs`: at most",
                    {StrCat("`runs`: at most ", DocCount(http::kMaxSeriesRuns), " (")}, code);
  ExpectPassageSays(api, "- `points` (default",
                    {StrCat("`points` (default ", DocCount(http::kDefaultSeriesPoints),
                            ", from 2 to ", DocCount(http::kMaxSeriesPoints), ")")},
                    code);
  ExpectPassageSays(api, "points of one run are read",
                    {StrCat("At most ", DocCount(http::kMaxScannedPoints), " points of one run")},
                    code);
}

// A workflow's `retry` defaults (docs/workflow-format.md's `retry` table) are RetryPolicy's.
TEST(DocsNumbersTest, RetryDefaultsMatchTheCode) {
  DocPage page = LoadDocPage("docs/workflow-format.md");
  workflow::RetryPolicy policy;
  const std::string code = "daemon/workflow/workflow.h: RetryPolicy";
  ExpectCellStartsWith(page, "limit", 2, StrCat("`", policy.limit, "`"),
                       StrCat(code, "::limit = ", policy.limit));
  ExpectCellStartsWith(page, "infra_limit", 2, StrCat("`", policy.infra_limit, "`"),
                       StrCat(code, "::infra_limit = ", policy.infra_limit));
  for (auto [key, ms] : {std::pair<std::string, int64_t>{"backoff", policy.backoff_ms},
                         std::pair<std::string, int64_t>{"max_backoff", policy.max_backoff_ms}}) {
    std::optional<DocRow> row = FindRow(page, key);
    ASSERT_TRUE(row.has_value()) << page.name << " has no `retry` row '" << key << "'";
    std::string text = row->cells[2].substr(1, row->cells[2].size() - 2);  // `10s` -> 10s
    EXPECT_EQ(DurationMs(text), ms)
        << page.name << ":" << row->line << ": `retry." << key << "` defaults to " << row->cells[2]
        << "; " << code << " says " << ms << " ms";
  }
  ExpectCellHas(page, "retry", 2, StrCat(policy.infra_limit, " after infrastructure failures"),
                StrCat(code, "::infra_limit = ", policy.infra_limit));
}

// longhauld's and the agent's flag defaults, as their flag tables state them, against the
// defaults the code starts from.
TEST(DocsNumbersTest, FlagDefaultsMatchTheCode) {
  DocPage coordinator = LoadDocPage("docs/coordinator.md");
  server::CoordinatorFlags flags;
  notify::RetryPolicy notify;
  http::HttpOptions http;
  ExpectFlagDefault(coordinator, "--notify-tries N", std::to_string(notify.max_tries),
                    StrCat("daemon/notify/outbox.h: RetryPolicy::max_tries = ", notify.max_tries));
  ExpectFlagDefault(coordinator, "--notify-backoff DURATION", flags.notify_backoff,
                    "daemon/server/coordinator_flags.h: notify_backoff");
  ExpectFlagDefault(coordinator, "--notify-max-backoff DURATION", flags.notify_max_backoff,
                    "daemon/server/coordinator_flags.h: notify_max_backoff");
  EXPECT_EQ(DurationMs(flags.notify_backoff), notify.backoff_ms)
      << "--notify-backoff's default and notify::RetryPolicy::backoff_ms";
  EXPECT_EQ(DurationMs(flags.notify_max_backoff), notify.max_backoff_ms)
      << "--notify-max-backoff's default and notify::RetryPolicy::max_backoff_ms";
  ExpectFlagDefault(coordinator, "--http-header-timeout DURATION", flags.http_header_timeout,
                    "daemon/server/coordinator_flags.h: http_header_timeout");
  EXPECT_EQ(DurationMs(flags.http_header_timeout), http.header_timeout_ms)
      << "--http-header-timeout's default and HttpOptions::header_timeout_ms";
  ExpectFlagDefault(coordinator, "--http-max-connections N", std::to_string(http.max_connections),
                    "daemon/http/server.h: HttpOptions::max_connections");
  ExpectFlagDefault(coordinator, "--http-max-streams N", std::to_string(http.sse.max_streams),
                    "daemon/http/sse_hub.h: SseOptions::max_streams");

  DocPage operations = LoadDocPage("docs/operations.md");
  ExpectPassageSays(operations, "- **Retries.** A failed try",
                    {StrCat("`--notify-backoff` (", flags.notify_backoff, ")"),
                     StrCat("`--notify-max-backoff` (", flags.notify_max_backoff, ")"),
                     StrCat("`--notify-tries` (", notify.max_tries, ")")},
                    "daemon/server/coordinator_flags.h, daemon/notify/outbox.h: RetryPolicy");

  DocPage agent_page = LoadDocPage("docs/agent.md");
  agent::AgentFlags agent_flags;
  ExpectFlagDefault(agent_page, "--event-window N", std::to_string(agent_flags.event_window),
                    "agent/lib/agent_flags.h: event_window");
  ExpectFlagDefault(agent_page, "--max-event-rate N", std::to_string(agent_flags.max_event_rate),
                    "agent/lib/agent_flags.h: max_event_rate");
}

}  // namespace
}  // namespace longhaul::testing
