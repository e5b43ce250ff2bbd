// A LonghaulService with canned answers, served on 127.0.0.1:0 in the test process, for
// end-to-end tests of the real `longhaul` binary. It records what the CLI sent.
#pragma once

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "longhaul/v1/client.grpc.pb.h"

namespace longhaul::cli {

class FakeLonghaulService final : public v1::LonghaulService::Service {
 public:
  // Canned state; set before the CLI runs.
  std::map<int64_t, v1::Run> runs;  // GetRun, CancelRun, RetryStage; ListRuns lists them
  // GetRun of a run listed here answers each of these in turn, then keeps to the last (a run
  // that moves on between polls); before `runs`.
  std::map<int64_t, std::vector<v1::Run>> run_steps;
  int get_runs = 0;  // GetRun calls answered
  std::vector<v1::AgentInfo> agents;
  std::vector<v1::PlanEntry> plan;  // SubmitRun answers with these
  int64_t next_run_id = 42;
  // The first this many SubmitRun calls answer DEADLINE_EXCEEDED, as a coordinator whose
  // answer came too late.
  int submit_failures = 0;
  // ReadLog: each call takes the next step. A step is a chunk of the log, "" (nothing new
  // yet), or kAgentAway (UNAVAILABLE: the agent holding the log is not connected). After the
  // last step the log is finished.
  static constexpr const char* kAgentAway = "\x01away";
  std::vector<std::string> log_steps;
  // WatchRun streams these, then ends.
  std::vector<v1::RunUpdate> watch_updates;

  // What the CLI sent.
  std::vector<v1::SubmitRunRequest> submits;
  std::vector<v1::ListRunsRequest> list_runs;
  std::vector<v1::ReadLogRequest> read_logs;
  std::vector<v1::RetryStageRequest> retries;
  std::vector<std::string> authorization;  // "authorization" metadata of each call

  std::mutex mu;

  grpc::Status SubmitRun(grpc::ServerContext* ctx, const v1::SubmitRunRequest* req,
                         v1::SubmitRunResponse* resp) override;
  grpc::Status GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req,
                      v1::Run* resp) override;
  grpc::Status ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                        v1::ListRunsResponse* resp) override;
  grpc::Status CancelRun(grpc::ServerContext* ctx, const v1::CancelRunRequest* req,
                         v1::Run* resp) override;
  grpc::Status RetryStage(grpc::ServerContext* ctx, const v1::RetryStageRequest* req,
                          v1::Run* resp) override;
  grpc::Status WatchRun(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                        grpc::ServerWriter<v1::RunUpdate>* writer) override;
  grpc::Status ListAgents(grpc::ServerContext* ctx, const v1::ListAgentsRequest* req,
                          v1::ListAgentsResponse* resp) override;
  grpc::Status ReadLog(grpc::ServerContext* ctx, const v1::ReadLogRequest* req,
                       v1::ReadLogResponse* resp) override;

 private:
  void Record(grpc::ServerContext* ctx);
  size_t log_step_ = 0;
  int64_t log_size_ = 0;
};

// Serves `service` on 127.0.0.1 at a free port until destroyed.
class FakeServer {
 public:
  explicit FakeServer(FakeLonghaulService* service);
  ~FakeServer();
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace longhaul::cli
