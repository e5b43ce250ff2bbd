#include "bench/store/store_builder.h"

#include <chrono>
#include <filesystem>

#include "core/strings.h"
#include "daemon/store/sqlite_store.h"
#include "proto/state_names.h"

namespace longhaul::bench {
namespace {

std::string WorkflowName(int w) { return StrCat("wf", w); }

// A workflow file that parses: `stages` stages of /bin/true in a chain.
std::string WorkflowText(int w, int stages) {
  std::string text = StrCat("name: ", WorkflowName(w), "\nstages:\n");
  for (int s = 0; s < stages; ++s) {
    text += StrCat("  s", s, ":\n    run: [/bin/true]\n");
    if (s > 0) text += StrCat("    needs: [s", s - 1, "]\n");
  }
  return text;
}

v1::RunStatus RunStatusOf(const StoreShape& shape, int64_t run_id) {
  switch (((run_id - 1) / shape.workflows) % 20) {
    case 0:
    case 1:
      return v1::RUN_FAILED;
    case 2:
      return v1::RUN_CANCELLED;
    default:
      return v1::RUN_SUCCEEDED;
  }
}

// The event line number `i` (0-based) of `n` that an attempt reported.
store::EventRow EventOf(int64_t i, int64_t n, int64_t ts_ms) {
  store::EventRow e;
  e.seq = i + 1;
  e.ts_ms = ts_ms;
  if (i == n - 1) {
    e.type = "metric";
    e.line = StrCat(R"({"metric": {"name": "loss", "value": 0.25, "step": )", i, "}}");
  } else if (i % 50 == 25) {
    e.type = "message";
    e.line = R"({"message": {"level": "info", "text": "checkpoint written to ckpt/latest"}})";
  } else {
    e.type = "progress";
    e.line = StrCat(R"({"progress": {"done": )", i + 1, R"(, "total": )", n,
                    R"(, "unit": "samples"}})");
  }
  return e;
}

Status WriteRun(store::SqliteStore* db, const StoreShape& shape, int64_t run_id,
                int64_t workflow_id, int64_t attempts_before,
                int64_t per_attempt, int64_t extra, int64_t* events_written) {
  int w = static_cast<int>((run_id - 1) % shape.workflows);
  int stages = StagesOfRun(shape, run_id);
  v1::RunStatus status = RunStatusOf(shape, run_id);
  int64_t t = 1'700'000'000'000 + run_id * 60'000;
  store::RunRow run;
  run.workflow_id = workflow_id;
  run.workflow_name = WorkflowName(w);
  run.workflow_path = StrCat("/home/user/workflows/", run.workflow_name, ".yaml");
  run.status = status;
  run.params = {{"seed", std::to_string(run_id % 97)}};
  run.reason = status == v1::RUN_FAILED      ? "stage failed: exit code 1"
               : status == v1::RUN_CANCELLED ? "cancelled by user"
                                             : "";
  run.created_at_ms = t;
  run.started_at_ms = t + 10;
  run.ended_at_ms = t + 10 + stages * 5'000;
  RETURN_IF_ERROR(db->InsertRun(&run));
  if (run.id != run_id) {
    return absl::FailedPreconditionError(
        StrCat("run id ", run.id, " where ", run_id, " was expected: is the database new?"));
  }
  std::string blob(300, 'x');
  store::RunTotals totals;  // as the scheduler keeps them (no GPUs here)
  for (int s = 0; s < stages; ++s) {
    bool last = s == stages - 1;
    int64_t start = t + 10 + s * 5'000;
    store::StageRow st;
    st.run_id = run.id;
    st.name = StrCat("s", s);
    st.position = s;
    st.status = !last                       ? v1::STAGE_SUCCEEDED
                : status == v1::RUN_FAILED    ? v1::STAGE_FAILED
                : status == v1::RUN_CANCELLED ? v1::STAGE_CANCELLED
                                              : v1::STAGE_SUCCEEDED;
    st.attempt_count = 1;
    st.cache_key = StrCat("key-", run.id, "-", s);
    st.started_at_ms = start;
    st.ended_at_ms = start + 5'000;
    st.agent_id = "n0";
    st.resources.set_cpus(1);
    if (s > 0) st.needs = {StrCat("s", s - 1)};
    st.plan_action = "run";
    st.plan_reason = "no earlier run has this cache key";
    RETURN_IF_ERROR(db->InsertStage(&st));
    ++totals.stage_counts[std::string(StageStatusName(st.status))];
    int64_t index = attempts_before + s;
    int64_t n = per_attempt + (index < extra ? 1 : 0);
    store::AttemptRow at;
    at.stage_id = st.id;
    at.run_id = run.id;
    at.number = 1;
    at.agent_id = "n0";
    at.state = v1::ATTEMPT_EXITED;
    at.exit_code = st.status == v1::STAGE_FAILED ? 1 : 0;
    at.pid = 1000 + s;
    at.output_dir = StrCat("/var/lib/longhaul/runs/", run.id, "/s", s, "/1");
    at.start_blob = blob;
    at.created_at_ms = start;
    at.started_at_ms = start;
    at.ended_at_ms = start + 5'000;
    at.events = n;
    RETURN_IF_ERROR(db->InsertAttempt(&at));
    for (int64_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(bool fresh,
                       db->InsertEvent(at.id, EventOf(i, n, start + i * 5'000 / (n + 1))));
      if (!fresh) return absl::InternalError(StrCat("event ", i, " of attempt ", at.id, " twice"));
    }
    *events_written += n;
    RETURN_IF_ERROR(db->InsertMetric({st.id, at.id, 1, "loss", 1.0 / (1 + s), n, start}));
  }
  return db->UpdateRunTotals(run.id, totals);
}

}  // namespace

int StagesOfRun(const StoreShape& shape, int64_t run_id) {
  return 1 + static_cast<int>((run_id - 1) % shape.workflows) % 10;
}

Result<BuiltStore> BuildStore(const std::string& path, const StoreShape& shape,
                              void (*progress)(int64_t runs_done, int64_t runs)) {
  if (std::filesystem::exists(path)) {
    return absl::AlreadyExistsError(StrCat(path, " exists; the store is built into a new file"));
  }
  if (shape.runs < 1 || shape.events < 0 || shape.workflows < 1 ||
      shape.runs_per_transaction < 1) {
    return absl::InvalidArgumentError("store shape: runs, workflows and runs per transaction "
                                      "must be >= 1 and events >= 0");
  }
  auto t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto db, store::SqliteStore::Open(path));
  int64_t attempts = 0;
  for (int64_t r = 1; r <= shape.runs; ++r) attempts += StagesOfRun(shape, r);
  int64_t per_attempt = shape.events / attempts;
  int64_t extra = shape.events % attempts;

  RETURN_IF_ERROR(db->Begin());
  std::vector<int64_t> workflow_ids;
  for (int w = 0; w < shape.workflows; ++w) {
    std::string text = WorkflowText(w, 1 + w % 10);
    ASSIGN_OR_RETURN(int64_t id, db->PutWorkflow(WorkflowName(w), text, StrCat("hash-", w),
                                                 1'700'000'000'000));
    workflow_ids.push_back(id);
  }
  BuiltStore out;
  int64_t attempts_before = 0;
  for (int64_t r = 1; r <= shape.runs; ++r) {
    RETURN_IF_ERROR(WriteRun(db.get(), shape, r, workflow_ids[(r - 1) % shape.workflows],
                             attempts_before, per_attempt, extra, &out.events));
    attempts_before += StagesOfRun(shape, r);
    if (r % shape.runs_per_transaction == 0 || r == shape.runs) {
      RETURN_IF_ERROR(db->Commit());
      if (progress != nullptr) progress(r, shape.runs);
      if (r < shape.runs) RETURN_IF_ERROR(db->Begin());
    }
  }
  out.runs = shape.runs;
  out.stages = attempts;
  out.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace longhaul::bench
