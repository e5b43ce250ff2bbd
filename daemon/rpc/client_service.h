// LonghaulService: the client API. Reads go straight to the store's read connections; anything
// that changes state runs on the scheduler loop and answers once it is committed.
//
// Every method first asks the Authorizer (through CheckCall) whether the caller may do it and
// answers UNAUTHENTICATED or PERMISSION_DENIED, having touched nothing, when not.
#pragma once

#include "core/clock.h"
#include "daemon/auth/authorizer.h"
#include "daemon/rpc/client_audit.h"
#include "daemon/scheduler/loop.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/store/sqlite_store.h"
#include "longhaul/v1/client.grpc.pb.h"

namespace longhaul::rpc {

class ClientServiceImpl final : public v1::LonghaulService::Service {
 public:
  // `authorizer` and `clock` are not owned and outlive this service.
  ClientServiceImpl(scheduler::Scheduler* scheduler, scheduler::SchedulerLoop* loop,
                    store::SqliteStore* store, int64_t log_timeout_ms,
                    const auth::Authorizer* authorizer, const Clock* clock)
      : scheduler_(scheduler),
        loop_(loop),
        store_(store),
        log_timeout_ms_(log_timeout_ms),
        authorizer_(authorizer),
        clock_(clock) {}

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
  grpc::Status ListAudit(grpc::ServerContext* ctx, const v1::ListAuditRequest* req,
                         v1::ListAuditResponse* resp) override;

 private:
  // A mutation: CheckCall, then `fn`, then the call and its outcome into the audit trail.
  template <typename Request, typename Response>
  grpc::Status Mutate(grpc::ServerContext* ctx, auth::Action action, const Request* req,
                      Response* resp,
                      grpc::Status (ClientServiceImpl::*fn)(const Request*, Response*));
  // The mutations, once CheckCall has let them through.
  grpc::Status DoSubmitRun(const v1::SubmitRunRequest* req, v1::SubmitRunResponse* resp);
  grpc::Status DoPivotRun(const v1::PivotRunRequest* req, v1::SubmitRunResponse* resp);
  grpc::Status DoCancelRun(const v1::CancelRunRequest* req, v1::Run* resp);
  grpc::Status DoRetryStage(const v1::RetryStageRequest* req, v1::Run* resp);
  // Appends the entry on the scheduler loop (the store's one writer); it commits with the
  // loop's next batch. Logs, and drops the entry, if the write fails. (client_audit.cc)
  void Audit(const auth::Principal& who, auth::Action action, const AuditSubject& subject,
             const grpc::Status& status);

  // Plans (reuse or run, and why), checks that reused artifacts still exist on their agents,
  // and submits; a dry run stops after the plan.
  grpc::Status PlanAndSubmit(std::shared_ptr<scheduler::SubmitInput> input,
                             v1::SubmitRunResponse* resp);
  void CheckReusedArtifacts(scheduler::RunPlan* plan);

  scheduler::Scheduler* scheduler_;
  scheduler::SchedulerLoop* loop_;
  store::SqliteStore* store_;
  int64_t log_timeout_ms_;
  const auth::Authorizer* authorizer_;
  const Clock* clock_;
};

}  // namespace longhaul::rpc
