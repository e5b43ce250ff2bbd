#include "tests/integration/fault_util.h"

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/strings.h"
#include "longhaul/v1/agent.pb.h"

namespace longhaul::testing {
namespace {

constexpr int kPage = 10'000;

bool IsBlank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

}  // namespace

std::vector<AttemptOnDisk> AttemptsOnDisk(const Cluster& c) {
  std::vector<AttemptOnDisk> out;
  for (int i = 0; i < c.agent_count(); ++i) {
    std::error_code ec;
    std::vector<AttemptOnDisk> mine;
    for (const auto& e :
         std::filesystem::directory_iterator(c.AgentStateDir(i) + "/attempts", ec)) {
      AttemptOnDisk a;
      a.agent = i;
      a.dir = e.path().string();
      a.attempt_id = std::strtoll(e.path().filename().c_str(), nullptr, 10);
      v1::StartAttempt spec;
      std::string text = ReadTextFile(a.dir + "/spec.json");
      if (text.empty() || !google::protobuf::util::JsonStringToMessage(text, &spec).ok()) continue;
      a.run_id = spec.run_id();
      a.stage = spec.stage();
      a.number = spec.attempt();
      mine.push_back(std::move(a));
    }
    std::sort(mine.begin(), mine.end(),
              [](const auto& x, const auto& y) { return x.attempt_id < y.attempt_id; });
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

std::string AttemptDirOf(const Cluster& c, const v1::Attempt& a) {
  for (int i = 0; i < c.agent_count(); ++i) {
    if (c.AgentId(i) == a.agent_id()) return StrCat(c.AgentStateDir(i), "/attempts/", a.id());
  }
  return "";
}

std::vector<std::string> NonBlankLines(const std::string& path, std::vector<int64_t>* numbers) {
  std::vector<std::string> out;
  std::istringstream in(ReadTextFile(path));
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (IsBlank(line)) continue;
    if (line.back() == '\r') line.pop_back();  // as the agent sends it
    out.push_back(line);
    if (numbers != nullptr) numbers->push_back(n);
  }
  return out;
}

Result<std::vector<v1::EventRecord>> StoredEvents(Cluster& c, int64_t run_id,
                                                  const std::string& stage, int attempt) {
  std::vector<v1::EventRecord> out;
  v1::ListEventsRequest req;
  req.set_run_id(run_id);
  req.set_stage(stage);
  req.set_attempt(attempt);
  req.set_limit(kPage);
  for (;;) {
    v1::ListEventsResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status st = c.stub().ListEvents(&ctx, req, &resp);
    if (!st.ok()) {
      return absl::UnavailableError(StrCat("ListEvents run ", run_id, " stage ", stage, " attempt ",
                                           attempt, ": ", st.error_message()));
    }
    for (const auto& item : resp.events()) out.push_back(item.event());
    if (resp.events_size() < kPage) break;
    req.set_after_seq(resp.events(resp.events_size() - 1).event().seq());
  }
  return out;
}

::testing::AssertionResult EventsStoredExactlyOnce(Cluster& c, int64_t timeout_ms) {
  std::string not_done;
  bool all_done = WaitFor(
      [&] {
        not_done.clear();
        for (const AttemptOnDisk& a : AttemptsOnDisk(c)) {
          if (!std::filesystem::exists(a.dir + "/done")) {
            not_done += StrCat(" ", a.dir);
          }
        }
        return not_done.empty();
      },
      timeout_ms, 50);
  if (!all_done) {
    return ::testing::AssertionFailure()
           << "attempts whose exit the coordinator never acknowledged:" << not_done;
  }
  std::vector<AttemptOnDisk> attempts = AttemptsOnDisk(c);
  if (attempts.empty()) return ::testing::AssertionFailure() << "no attempt dir on any agent";
  for (const AttemptOnDisk& a : attempts) {
    std::string what = StrCat("attempt ", a.attempt_id, " (run ", a.run_id, " stage ", a.stage,
                              " #", a.number, " on ", c.AgentId(a.agent), ")");
    std::vector<int64_t> numbers;
    std::vector<std::string> lines = NonBlankLines(a.dir + "/events.jsonl", &numbers);
    Result<std::vector<v1::EventRecord>> stored = StoredEvents(c, a.run_id, a.stage, a.number);
    if (!stored.ok()) return ::testing::AssertionFailure() << what << ": " << stored.status();
    if (stored->size() != lines.size()) {
      return ::testing::AssertionFailure() << what << ": events.jsonl has " << lines.size()
                                           << " events, the store " << stored->size();
    }
    std::map<int64_t, int> seen;
    for (size_t i = 0; i < stored->size(); ++i) {
      const v1::EventRecord& e = (*stored)[i];
      if (++seen[e.seq()] > 1) {
        return ::testing::AssertionFailure() << what << ": seq " << e.seq() << " stored twice";
      }
      if (e.seq() != numbers[i] || e.line() != lines[i]) {
        return ::testing::AssertionFailure()
               << what << ": stored event " << i + 1 << " is seq " << e.seq() << " '" << e.line()
               << "', events.jsonl line " << numbers[i] << " is '" << lines[i] << "'";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

const v1::Attempt* FindAttempt(const v1::Run& run, const std::string& stage, int number) {
  const v1::Stage* s = FindStage(run, stage);
  if (s == nullptr) return nullptr;
  for (const v1::Attempt& a : s->attempts()) {
    if (a.number() == number) return &a;
  }
  return nullptr;
}

void FaultTest::TearDown() {
  // After a fatal failure the run may be anywhere; its logs say more than this check would.
  if (cluster_ != nullptr && !HasFatalFailure()) {
    EXPECT_TRUE(EventsStoredExactlyOnce(*cluster_));
  }
  ClusterTest::TearDown();
}

ClusterOptions FaultTest::FaultOptions(int agents, const std::string& lost_after) {
  ClusterOptions o;
  o.agents = agents;
  o.agent_timeout = "1s";
  o.lost_after = lost_after;
  o.heartbeat = "200ms";
  return o;
}

}  // namespace longhaul::testing
