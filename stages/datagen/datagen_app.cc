#include "stages/datagen/datagen_app.h"

#include <signal.h>

#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <filesystem>
#include <unordered_set>

#include "core/logging.h"
#include "core/strings.h"
#include "stages/common/endpoint.h"
#include "stages/common/jsonl.h"

namespace longhaul::stages {

Result<DatagenOutcome> RunDatagen(DatagenOptions o, EventWriter& events) {
  auto log = GetLogger("datagen");
  RETURN_IF_ERROR(ValidateDatagenOptions(o));
  ASSIGN_OR_RETURN(net::HttpUrl url, ParseEndpoint(o.endpoint));
  ASSIGN_OR_RETURN(std::vector<Conversation> prompts, ReadConversations(o.prompts_file));
  // The first N distinct ids, in file order.
  std::vector<Conversation> wanted;
  std::unordered_set<std::string> seen;
  int64_t duplicates = 0;
  for (auto& c : prompts) {
    if (static_cast<int64_t>(wanted.size()) >= o.samples) break;
    if (!seen.insert(c.id).second) {
      ++duplicates;
      continue;
    }
    wanted.push_back(std::move(c));
  }
  if (duplicates > 0) {
    log->warn("{}: {} records repeat an earlier id and were skipped", o.prompts_file, duplicates);
  }
  if (static_cast<int64_t>(wanted.size()) < o.samples) {
    std::string msg = StrCat(o.prompts_file, " holds ", wanted.size(), " distinct samples; ",
                             o.samples, " were asked for");
    log->warn("{}", msg);
    events.Message("warn", msg);
  }
  DatagenOutcome outcome;
  outcome.total = static_cast<int64_t>(wanted.size());

  ASSIGN_OR_RETURN(SampleStore store, SampleStore::Open(o.out_file, o.failed_file));
  if (store.truncated_bytes() > 0) {
    log->warn("{}: cut off a torn last line of {} bytes (an earlier attempt was killed)",
              o.out_file, store.truncated_bytes());
  }
  std::vector<Conversation> todo;
  for (auto& c : wanted) {
    if (store.Finished(c.id)) {
      ++outcome.resumed;
    } else {
      todo.push_back(std::move(c));
    }
  }
  if (outcome.resumed > 0) {
    log->info("resuming: {} of {} samples already in {}", outcome.resumed, outcome.total,
              o.out_file);
  }
  events.Progress(static_cast<double>(outcome.resumed), static_cast<double>(outcome.total),
                  "samples");

  boost::asio::io_context io(1);
  net::HttpClient client(io, url);
  DatagenRunner runner(io, client, o, std::move(todo), store, events, outcome.total,
                       outcome.resumed);
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    log->warn(
        "signal {}: stopping; finished samples are kept, in-flight ones are redone on "
        "resume",
        sig);
    runner.Stop();
  });
  runner.OnFinished([&] { signals.cancel(); });
  auto start = std::chrono::steady_clock::now();
  Status run = runner.Run();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RETURN_IF_ERROR(store.Sync());
  outcome.stats = runner.stats();
  outcome.interrupted = runner.stopped() && run.ok();
  const DatagenStats& st = outcome.stats;

  int64_t done_total = outcome.resumed + st.done;
  events.Metric("samples", static_cast<double>(done_total));
  events.Metric("samples_generated", static_cast<double>(st.done));
  events.Metric("failed_samples", static_cast<double>(st.failed));
  events.Metric("request_retries", static_cast<double>(st.retries));
  events.Metric("rate_limited_responses", static_cast<double>(st.rate_limited));
  if (st.done > 0) {
    events.Metric("reasoning_capture_rate",
                  static_cast<double>(st.with_reasoning) / static_cast<double>(st.done));
  }
  if (elapsed > 0) {
    events.Metric("output_tokens_per_s", static_cast<double>(st.output_tokens) / elapsed);
    events.Metric("samples_per_s", static_cast<double>(st.done) / elapsed);
  }
  RETURN_IF_ERROR(run);
  std::error_code ec;
  auto size = std::filesystem::file_size(o.out_file, ec);
  int64_t bytes = ec ? 0 : static_cast<int64_t>(size);
  // Absolute: dependents run in other directories.
  events.Output("samples", std::filesystem::absolute(o.out_file).lexically_normal().string());
  events.Artifact("samples", o.out_file, bytes);
  if (st.failed > 0) events.Artifact("failed_samples", o.failed_file, std::nullopt);
  log->info(
      "{} samples generated ({} resumed, {} failed, {} retries), {} output tokens in "
      "{:.1f} s",
      st.done, outcome.resumed, st.failed, st.retries, st.output_tokens, elapsed);
  outcome.too_many_failures =
      outcome.total > 0 &&
      static_cast<double>(st.failed) / static_cast<double>(outcome.total) > o.max_failed_fraction;
  return outcome;
}

}  // namespace longhaul::stages
