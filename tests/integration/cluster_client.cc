// What a Cluster's tests look at: the client API, the database file and the daemons' logs.
#include <grpcpp/grpcpp.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

constexpr int64_t kCallDeadlineMs = 10'000;

void SetDeadline(grpc::ClientContext& ctx, const std::string& token) {
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(kCallDeadlineMs));
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
}

Status FromGrpc(const grpc::Status& s, const std::string& call) {
  if (s.ok()) return OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      StrCat(call, ": ", s.error_message()));
}

std::string Tail(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::string tail = text.substr(text.size() - max_bytes);
  auto nl = tail.find('\n');
  if (nl != std::string::npos) tail = tail.substr(nl + 1);
  return StrCat("[... ", text.size() - tail.size(), " bytes before ...]\n", tail);
}

}  // namespace

Result<int64_t> Cluster::Submit(const std::string& workflow_text,
                                const std::map<std::string, std::string>& params) {
  v1::SubmitRunRequest req;
  req.set_workflow_text(workflow_text);
  req.set_workflow_path("<test>");
  for (const auto& [k, v] : params) (*req.mutable_params())[k] = v;
  v1::SubmitRunResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(ctx, options_.client_token);
  RETURN_IF_ERROR(FromGrpc(stub_->SubmitRun(&ctx, req, &resp), "SubmitRun"));
  return resp.run().id();
}

Result<v1::Run> Cluster::GetRun(int64_t id, bool attempts) {
  v1::GetRunRequest req;
  req.set_id(id);
  req.set_include_attempts(attempts);
  v1::Run run;
  grpc::ClientContext ctx;
  SetDeadline(ctx, options_.client_token);
  RETURN_IF_ERROR(FromGrpc(stub_->GetRun(&ctx, req, &run), StrCat("GetRun ", id)));
  return run;
}

Result<v1::ListRunsResponse> Cluster::ListRuns(const v1::ListRunsRequest& req) {
  v1::ListRunsResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(ctx, options_.client_token);
  RETURN_IF_ERROR(FromGrpc(stub_->ListRuns(&ctx, req, &resp), "ListRuns"));
  return resp;
}

Result<std::vector<v1::AgentInfo>> Cluster::ListAgents() {
  v1::ListAgentsRequest req;
  v1::ListAgentsResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(ctx, options_.client_token);
  RETURN_IF_ERROR(FromGrpc(stub_->ListAgents(&ctx, req, &resp), "ListAgents"));
  return std::vector<v1::AgentInfo>(resp.agents().begin(), resp.agents().end());
}

Result<std::vector<v1::ListEventsResponse::Item>> Cluster::ListEvents(int64_t run_id,
                                                                      const std::string& stage,
                                                                      int attempt) {
  v1::ListEventsRequest req;
  req.set_run_id(run_id);
  req.set_stage(stage);
  req.set_attempt(attempt);
  v1::ListEventsResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(ctx, options_.client_token);
  RETURN_IF_ERROR(FromGrpc(stub_->ListEvents(&ctx, req, &resp), "ListEvents"));
  return std::vector<v1::ListEventsResponse::Item>(resp.events().begin(), resp.events().end());
}

Result<v1::Run> Cluster::WaitForRun(int64_t id, const std::function<bool(const v1::Run&)>& pred,
                                    int64_t timeout_ms) {
  Result<v1::Run> last = absl::UnavailableError("no answer yet");
  bool met = WaitFor(
      [&] {
        last = GetRun(id, true);
        return last.ok() && pred(*last);
      },
      timeout_ms, 20);
  if (met) return last;
  return absl::DeadlineExceededError(
      StrCat("run ", id, " did not reach the expected state within ", timeout_ms,
             " ms; last seen: ", last.ok() ? DescribeRun(*last) : ToStd(last.status().message())));
}

Result<v1::Run> Cluster::WaitForRunEnd(int64_t id, int64_t timeout_ms) {
  return WaitForRun(
      id, [](const v1::Run& r) { return IsTerminal(r.status()); }, timeout_ms);
}

Result<std::string> Cluster::IntegrityCheck() const { return Query("PRAGMA integrity_check"); }

Result<std::string> Cluster::Query(const std::string& sql) const {
  sqlite3* db = nullptr;
  std::string path = db_path();
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string err = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return absl::UnavailableError(StrCat("open ", path, " read-only: ", err));
  }
  sqlite3_busy_timeout(db, 5'000);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
  while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    if (!out.empty()) out += "\n";
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    out += text ? reinterpret_cast<const char*>(text) : "NULL";
    rc = SQLITE_OK;
  }
  std::string err = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  if (!err.empty()) return absl::InternalError(StrCat(sql, " on ", path, ": ", err));
  return out;
}

std::string Cluster::Logs(size_t max_bytes) const {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(tmp_.Join("logs"), ec)) {
    files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::string out;
  for (const std::string& f : files) {
    out += StrCat("----- ", f, " -----\n", Tail(ReadTextFile(f), max_bytes), "\n");
  }
  return out;
}

const v1::Stage* FindStage(const v1::Run& run, const std::string& name) {
  for (const v1::Stage& s : run.stages()) {
    if (s.name() == name) return &s;
  }
  return nullptr;
}

std::string DescribeRun(const v1::Run& run) {
  std::string out = StrCat("run ", run.id(), " ", RunStatusName(run.status()));
  if (!run.reason().empty()) out += StrCat(" (", run.reason(), ")");
  for (const v1::Stage& s : run.stages()) {
    out += StrCat("\n  ", s.name(), ": ", StageStatusName(s.status()));
    if (!s.reason().empty()) out += StrCat(" (", s.reason(), ")");
    for (const v1::Attempt& a : s.attempts()) {
      out += StrCat("\n    attempt ", a.number(), " on ", a.agent_id(), ": ",
                    AttemptStateName(a.state()));
      if (!a.reason().empty()) out += StrCat(" (", a.reason(), ")");
    }
  }
  return out;
}

void ClusterTest::StartCluster(ClusterOptions options) {
  cluster_ = std::make_unique<Cluster>(std::move(options));
  Status st = cluster_->Start();
  ASSERT_TRUE(st.ok()) << st.message() << "\n" << cluster_->Logs();
}

int64_t ClusterTest::CliRunToEnd(const std::vector<std::string>& args,
                                 v1::RunStatus expected) {
  CommandResult r = cluster().Cli(args, 60'000);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return 0;
  int64_t id = std::stoll(r.out);
  Result<v1::Run> run = cluster().WaitForRunEnd(id, 60'000);
  EXPECT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run.ok() ? run->status() : v1::RUN_STATUS_UNSPECIFIED, expected)
      << (run.ok() ? DescribeRun(*run) : "");
  return id;
}

void ClusterTest::TearDown() {
  if (cluster_ == nullptr) return;
  Result<std::string> check = cluster_->IntegrityCheck();
  EXPECT_TRUE(check.ok()) << check.status().message();
  if (check.ok()) {
    EXPECT_EQ(*check, "ok") << "PRAGMA integrity_check on " << cluster_->db_path();
  }
  if (HasFailure()) {
    std::cerr << "\n===== logs of the cluster in " << cluster_->dir().path()
              << " (set LONGHAUL_KEEP_TEST_DIRS=1 to keep it) =====\n"
              << cluster_->Logs();
  }
  cluster_.reset();
}

}  // namespace longhaul::testing
