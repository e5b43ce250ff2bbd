// ClientApi::GetSweep: a foreach stage of a run as one table, what `longhaul show RUN --sweep`
// prints and the web UI's sweep view draws (docs/sweeps.md, "Looking at a sweep").
#include <algorithm>
#include <map>
#include <set>

#include "core/strings.h"
#include "daemon/rpc/client_api.h"
#include "daemon/scheduler/early_stop.h"
#include "daemon/workflow/sweep_items.h"

namespace longhaul::rpc {
namespace {

// The v1 stages named `names` of run `run_id`, every page, by name.
Result<std::map<std::string, v1::Stage>> SweepStagesByName(store::SqliteStore* store,
                                                           int64_t run_id,
                                                           const std::vector<std::string>& names) {
  std::map<std::string, v1::Stage> out;
  v1::ListStagesRequest req;
  req.set_run_id(run_id);
  for (const std::string& n : names) req.add_names(n);
  for (;;) {
    ASSIGN_OR_RETURN(v1::ListStagesResponse page, store->ListStages(req));
    for (v1::Stage& s : *page.mutable_stages()) {
      std::string name = s.name();
      out.emplace(std::move(name), std::move(s));
    }
    if (page.next_page_token().empty()) return out;
    req.set_page_token(page.next_page_token());
  }
}

// The metric shown: the request's, else the early_stop metric, else the first name (in
// alphabetical order) the items report.
std::string ChosenSweepMetric(const v1::GetSweepRequest& req, const workflow::Sweep& sweep,
                              const std::set<std::string>& reported) {
  if (!req.metric().empty()) return req.metric();
  if (sweep.early_stop) return sweep.early_stop->metric;
  return reported.empty() ? std::string() : *reported.begin();
}

}  // namespace

Result<v1::GetSweepResponse> ClientApi::GetSweep(const v1::GetSweepRequest& req) {
  v1::GetRunRequest head;
  head.set_id(req.run_id());
  head.set_include_workflow_text(true);
  head.set_stage_limit(-1);
  ASSIGN_OR_RETURN(v1::Run run, store_->GetRun(head));
  Result<workflow::Sweep> sweep = workflow::ReadSweep(run.workflow_text(), req.stage());
  if (!sweep.ok()) return Annotate(sweep.status(), StrCat("run ", req.run_id()));

  v1::GetSweepResponse resp;
  resp.set_run_id(req.run_id());
  resp.set_sweep(req.stage());
  if (!sweep->items.empty()) {
    for (const auto& [k, v] : sweep->items.front().values) resp.add_keys(k);
  }
  std::vector<std::string> names;
  for (const workflow::SweepItem& item : sweep->items) names.push_back(item.stage);
  ASSIGN_OR_RETURN(auto stages, SweepStagesByName(store_, req.run_id(), names));
  std::set<std::string> reported;
  for (const auto& [name, s] : stages) {
    for (const v1::Metric& m : s.metrics()) reported.insert(m.name());
  }
  for (const std::string& m : reported) resp.add_metrics(m);
  std::string metric = ChosenSweepMetric(req, *sweep, reported);
  const workflow::EarlyStopSpec* rule = sweep->early_stop.get();
  bool maximize = rule != nullptr && rule->metric == metric && rule->maximize;
  resp.set_metric(metric);
  resp.set_maximize(maximize);

  std::map<std::string, v1::SweepItem*> by_stage;
  for (const workflow::SweepItem& item : sweep->items) {
    v1::SweepItem* out = resp.add_items();
    out->set_stage(item.stage);
    for (const auto& [k, v] : item.values) {
      v1::SweepParam* p = out->add_params();
      p->set_key(k);
      p->set_value(v);
    }
    auto it = stages.find(item.stage);
    if (it == stages.end()) {
      out->set_absent(true);
      continue;
    }
    const v1::Stage& s = it->second;
    out->set_status(s.status());
    out->set_reason(s.reason());
    out->set_wall_seconds(s.wall_seconds());
    out->set_gpu_hours(s.gpu_hours());
    out->set_started_at_ms(s.started_at_ms());
    by_stage[item.stage] = out;
  }

  if (!metric.empty()) {
    ASSIGN_OR_RETURN(std::vector<store::SqliteStore::SweepValue> values,
                     store_->ReadSweepValues(req.run_id(), names, metric));
    for (const store::SqliteStore::SweepValue& m : values) {
      v1::SweepItem* item = by_stage[m.stage];
      if (item == nullptr) continue;
      item->set_final(m.value);
      if (!item->has_best() || (maximize ? m.value > item->best() : m.value < item->best())) {
        item->set_best(m.value);
      }
      if (!m.step) continue;
      item->set_steps(std::max(item->has_steps() ? item->steps() : 0, *m.step));
      if (req.include_series()) {
        v1::SweepPoint* p = item->add_series();
        p->set_step(*m.step);
        p->set_value(m.value);
      }
    }
  }

  if (rule != nullptr) {
    v1::SweepEarlyStop* es = resp.mutable_early_stop();
    es->set_rule(rule->rule == workflow::EarlyStopSpec::Rule::kAsha ? "asha" : "median");
    es->set_metric(rule->metric);
    for (int64_t r : rule->rungs) es->add_rungs(r);
    es->set_eta(rule->eta);
    es->set_min_items(rule->min_items);
    // Where each stopped item was stopped: the rule judging the stored values again, in the
    // order they were stored, gives the verdicts the scheduler gave (early_stop.h).
    ASSIGN_OR_RETURN(std::vector<store::SqliteStore::SweepValue> judged,
                     store_->ReadSweepValues(req.run_id(), names, rule->metric));
    scheduler::SweepJudge judge(*rule);
    for (const store::SqliteStore::SweepValue& m : judged) {
      if (!m.step) continue;
      std::optional<scheduler::EarlyStopVerdict> verdict = judge.Observe(m.stage, *m.step, m.value);
      v1::SweepItem* item = by_stage[m.stage];
      if (!verdict || item == nullptr || item->status() != v1::STAGE_STOPPED_EARLY) continue;
      item->set_stopped_at_step(verdict->step);
      item->set_stopped_value(verdict->value);
    }
  }
  return resp;
}

}  // namespace longhaul::rpc
