// LonghaulService: the client API. Reads go straight to the store's read connections; anything
// that changes state runs on the scheduler loop and answers once it is committed.
#pragma once

#include "daemon/scheduler/loop.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/store/sqlite_store.h"
#include "longhaul/v1/client.grpc.pb.h"

namespace longhaul::rpc {

class ClientServiceImpl final : public v1::LonghaulService::Service {
 public:
  ClientServiceImpl(scheduler::Scheduler* scheduler, scheduler::SchedulerLoop* loop,
                    store::SqliteStore* store, int64_t log_timeout_ms)
      : scheduler_(scheduler), loop_(loop), store_(store), log_timeout_ms_(log_timeout_ms) {}

  grpc::Status SubmitRun(grpc::ServerContext* ctx, const v1::SubmitRunRequest* req,
                         v1::SubmitRunResponse* resp) override;
  grpc::Status PivotRun(grpc::ServerContext* ctx, const v1::PivotRunRequest* req,
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
  grpc::Status ListEvents(grpc::ServerContext* ctx, const v1::ListEventsRequest* req,
                          v1::ListEventsResponse* resp) override;

 private:
  // Plans (reuse or run, and why), checks that reused artifacts still exist on their agents,
  // and submits; a dry run stops after the plan.
  grpc::Status PlanAndSubmit(std::shared_ptr<scheduler::SubmitInput> input,
                             v1::SubmitRunResponse* resp);
  void CheckReusedArtifacts(scheduler::RunPlan* plan);

  scheduler::Scheduler* scheduler_;
  scheduler::SchedulerLoop* loop_;
  store::SqliteStore* store_;
  int64_t log_timeout_ms_;
};

}  // namespace longhaul::rpc
