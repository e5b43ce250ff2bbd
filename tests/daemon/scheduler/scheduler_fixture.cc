#include "tests/daemon/scheduler/scheduler_fixture.h"

#include "core/hash.h"
#include "core/strings.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::scheduler {

SchedulerTest::SchedulerTest() {
  auto s = store::SqliteStore::Open(dir_.Join("longhaul.db"));
  EXPECT_TRUE(s.ok()) << s.status();
  store_ = std::move(*s);
  options_.agent_timeout_ms = 10'000;
  options_.lost_after_ms = 60'000;
  options_.seed = 42;
  NewScheduler();
}

void SchedulerTest::NewScheduler(const std::function<void(Scheduler&)>& before_recover) {
  scheduler_ = std::make_unique<Scheduler>(store_.get(), &clock_, &link_, options_);
  if (before_recover) before_recover(*scheduler_);
  ASSERT_TRUE(store_->Begin().ok());
  ASSERT_TRUE(scheduler_->Recover().ok());
  ASSERT_TRUE(scheduler_->FlushToStore().ok());
  ASSERT_TRUE(store_->Commit().ok());
  scheduler_->AfterCommit();
}

void SchedulerTest::Batch(const std::function<void()>& fn) {
  ASSERT_TRUE(store_->Begin().ok());
  scheduler_->Tick();
  fn();
  scheduler_->Dispatch();
  Status st = scheduler_->FlushToStore();
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_TRUE(store_->Commit().ok());
  scheduler_->AfterCommit();
}

Status SchedulerTest::TryBatch(const std::function<void()>& fn) {
  RETURN_IF_ERROR(store_->Begin());
  scheduler_->Tick();
  fn();
  scheduler_->Dispatch();
  Status st = scheduler_->FlushToStore();
  if (st.ok()) st = store_->Commit();
  if (!st.ok()) {
    store_->Rollback();
    return st;
  }
  scheduler_->AfterCommit();
  return OkStatus();
}

void SchedulerTest::RecoverAfterFailedCommit() {
  ASSERT_TRUE(store_->Begin().ok());
  ASSERT_TRUE(scheduler_->Recover().ok());
  ASSERT_TRUE(scheduler_->FlushToStore().ok());
  ASSERT_TRUE(store_->Commit().ok());
}

int64_t SchedulerTest::Submit(const std::string& yaml, std::map<std::string, std::string> overrides,
                              const std::string& priority) {
  return SubmitWith(yaml, [&](SubmitInput* in) {
    in->overrides = std::move(overrides);
    in->priority = priority;
  });
}

int64_t SchedulerTest::SubmitWith(const std::string& yaml,
                                  const std::function<void(SubmitInput*)>& adjust) {
  auto wf = workflow::ParseWorkflow(yaml, "test.yaml");
  EXPECT_TRUE(wf.ok()) << wf.status();
  SubmitInput in;
  in.workflow = std::move(*wf);
  in.text = yaml;
  in.path = "test.yaml";
  in.hash = Sha256Hex(yaml);
  adjust(&in);
  int64_t id = 0;
  Batch([&] {
    auto out = scheduler_->Submit(std::move(in));
    ASSERT_TRUE(out.ok()) << out.status();
    id = out->run.id();
  });
  return id;
}

uint64_t SchedulerTest::Connect(const std::string& id, double cpus, int gpus,
                                std::vector<v1::OwnedAttempt> owned) {
  return ConnectHello(id, cpus, gpus, std::move(owned), {}, "local");
}

uint64_t SchedulerTest::ConnectLabeled(const std::string& id, double cpus, int gpus,
                                       std::map<std::string, std::string> labels,
                                       const std::string& executor) {
  return ConnectHello(id, cpus, gpus, {}, std::move(labels), executor);
}

uint64_t SchedulerTest::ConnectShared(const std::string& id, double cpus,
                                      std::vector<std::string> shared) {
  return ConnectHello(id, cpus, 0, {}, {}, "local", std::move(shared));
}

uint64_t SchedulerTest::ConnectHello(const std::string& id, double cpus, int gpus,
                                     std::vector<v1::OwnedAttempt> owned,
                                     std::map<std::string, std::string> labels,
                                     const std::string& executor,
                                     std::vector<std::string> shared_paths) {
  uint64_t session = next_session_++;
  session_agent_[session] = id;
  v1::Hello hello;
  hello.set_agent_id(id);
  hello.set_hostname(id + ".local");
  hello.mutable_resources()->set_cpus(cpus);
  hello.mutable_resources()->set_memory_bytes(int64_t{16} << 30);
  hello.mutable_resources()->set_gpus(gpus);
  hello.set_data_dir("/data/" + id);
  hello.set_executor(executor);
  for (const auto& [k, v] : labels) (*hello.mutable_labels())[k] = v;
  for (auto& o : owned) *hello.add_attempts() = o;
  for (auto& p : shared_paths) hello.add_shared_paths(p);
  Batch([&] { scheduler_->OnAgentConnected(session, hello); });
  return session;
}

void SchedulerTest::Heartbeat(uint64_t session) {
  v1::AgentMessage m;
  m.mutable_heartbeat()->set_ts_ms(clock_.NowMs());
  Batch([&] { scheduler_->OnAgentMessage(session, m); });
}

void SchedulerTest::Started(uint64_t session, int64_t attempt_id) {
  v1::AgentMessage m;
  m.mutable_started()->set_attempt_id(attempt_id);
  m.mutable_started()->set_pid(1000 + attempt_id);
  m.mutable_started()->set_started_at_ms(clock_.NowMs());
  Batch([&] { scheduler_->OnAgentMessage(session, m); });
}

void SchedulerTest::Exit(uint64_t session, int64_t attempt_id, int code, int signal) {
  v1::AgentMessage m;
  m.mutable_exited()->set_attempt_id(attempt_id);
  m.mutable_exited()->set_exit_code(code);
  m.mutable_exited()->set_signal(signal);
  m.mutable_exited()->set_ended_at_ms(clock_.NowMs());
  Batch([&] { scheduler_->OnAgentMessage(session, m); });
}

void SchedulerTest::ExecutorEnded(uint64_t session, int64_t attempt_id, const std::string& kind,
                                  const std::string& node) {
  v1::AgentMessage m;
  m.mutable_exited()->set_attempt_id(attempt_id);
  m.mutable_exited()->set_exit_code(-1);
  m.mutable_exited()->set_ended_at_ms(clock_.NowMs());
  m.mutable_exited()->set_failure_kind(kind);
  m.mutable_exited()->set_reason(StrCat(kind, " (test)"));
  m.mutable_exited()->set_node(node);
  Batch([&] { scheduler_->OnAgentMessage(session, m); });
}

void SchedulerTest::Events(uint64_t session, int64_t attempt_id,
                           const std::vector<std::string>& lines, int64_t first_seq) {
  v1::AgentMessage m;
  m.mutable_events()->set_attempt_id(attempt_id);
  int64_t seq = first_seq;
  for (const auto& line : lines) {
    auto* e = m.mutable_events()->add_events();
    e->set_seq(seq++);
    e->set_ts_ms(clock_.NowMs());
    e->set_line(line);
  }
  Batch([&] { scheduler_->OnAgentMessage(session, m); });
}

std::vector<v1::StartAttempt> SchedulerTest::TakeStarts() {
  std::vector<v1::StartAttempt> out;
  for (auto& [s, m] : link_.sent) {
    if (m.has_start()) out.push_back(m.start());
  }
  link_.sent.clear();
  return out;
}

std::map<std::string, int64_t> SchedulerTest::TakeStartedIds() {
  std::map<std::string, int64_t> out;
  for (const v1::StartAttempt& s : TakeStarts()) out[s.stage()] = s.attempt_id();
  return out;
}

std::string MetricAtStep(const std::string& name, int64_t step, double value) {
  return StrCat(R"({"metric": {"name": ")", name, R"(", "value": )", value, R"(, "step": )", step,
                "}}");
}

std::vector<v1::CancelAttempt> SchedulerTest::TakeCancels() {
  std::vector<v1::CancelAttempt> out;
  for (auto& [s, m] : link_.sent) {
    if (m.has_cancel()) out.push_back(m.cancel());
  }
  link_.sent.clear();
  return out;
}

std::vector<v1::CoordinatorMessage> SchedulerTest::TakeAll() {
  std::vector<v1::CoordinatorMessage> out;
  for (auto& [s, m] : link_.sent) out.push_back(m);
  link_.sent.clear();
  return out;
}

v1::Run SchedulerTest::GetRun(int64_t id) {
  auto r = store_->GetRun(id, true);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : v1::Run();
}

v1::Stage SchedulerTest::GetStage(int64_t run, const std::string& name) {
  v1::Run r = GetRun(run);
  for (const auto& s : r.stages()) {
    if (s.name() == name) return s;
  }
  ADD_FAILURE() << "no stage " << name;
  return v1::Stage();
}

}  // namespace longhaul::scheduler
