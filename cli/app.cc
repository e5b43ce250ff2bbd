#include "cli/app.h"

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/exit_codes.h"

namespace longhaul::cli {
namespace {

constexpr char kFooter[] =
    "Exit codes: 0 ok (watch: the run succeeded), 1 the run failed, 2 bad usage or invalid\n"
    "input, 3 not found, 4 the coordinator cannot be reached, 5 the run was cancelled,\n"
    "6 unauthenticated (no token, or an unknown one), 7 permission denied (the token's role\n"
    "may not do this), 10 any other error.";

// A run id on the command line: a positive number ("longhaul: show: run: 'abc' is not a run
// id" rather than CLI11's "Could not convert").
CLI::Validator RunIdCheck() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        bool digits = !text.empty() && text.size() <= 18 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
        if (digits && std::stoll(text) > 0) return "";
        return "'" + text + "' is not a run id (a number such as 12)";
      },
      "RUN");
}

// The first word of argv that is not a global option or its value: the command asked for.
std::string CommandWord(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--coordinator" || a == "--token-file" || a == "--tls-ca") {
      ++i;  // its value
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    return a;
  }
  return "";
}

// A parse error in the CLI's own form: what is wrong and where to read how it is used.
std::string UsageError(const CLI::App& app, const CLI::ParseError& e, int argc,
                       const char* const* argv) {
  std::string word = CommandWord(argc, argv);
  if (word.empty()) return "no command given (`longhaul --help` lists them)";
  auto named = [&](const CLI::App* c) { return c->check_name(word); };
  if (app.get_subcommands(std::function<bool(const CLI::App*)>(named)).empty()) {
    return "unknown command '" + word + "' (`longhaul --help` lists the commands)";
  }
  return word + ": " + e.what() + " (`longhaul " + word + " --help` says how it is used)";
}

}  // namespace

int RunCli(int argc, const char* const* argv, CliEnv& env) {
  CLI::App app{"longhaul: run and follow multi-day workflow campaigns", "longhaul"};
  app.footer(kFooter);
  app.require_subcommand(1);
  // Global flags work before and after the command: `longhaul runs --json`.
  app.fallthrough();
  std::string coordinator_flag;
  bool json = false;
  app.add_option("--coordinator", coordinator_flag,
                 "coordinator HOST:PORT (default: $LONGHAUL_COORDINATOR, "
                 "./.longhaul/coordinator.addr, 127.0.0.1:7070)");
  std::string token_file, tls_ca;
  app.add_option("--token-file", token_file,
                 "file whose first line is the token to send (default: $LONGHAUL_TOKEN, "
                 "then $LONGHAUL_TOKEN_FILE)");
  app.add_option("--tls-ca", tls_ca,
                 "connect over TLS, verifying the coordinator against this PEM CA "
                 "(default: $LONGHAUL_TLS_CA)");
  app.add_flag("--json", json, "print the coordinator's answer as JSON (read commands)");

  std::function<int(CommandContext&)> action;
  bool remote = true;

  SubmitOptions submit;
  CLI::App* cmd = app.add_subcommand("submit", "validate a workflow file and start a run");
  cmd->add_option("file", submit.file, "workflow file")->required();
  cmd->add_option("--set", submit.sets, "override a param: NAME=VALUE (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--watch", submit.watch, "then follow the run, as `watch` does");
  cmd->add_flag("--no-cache", submit.no_cache, "run every stage, reuse nothing");
  cmd->add_flag("--dry-run", submit.dry_run, "print the plan (STAGE ACTION REASON), start nothing");
  cmd->add_flag("--all", submit.all, "with --dry-run: every stage of a big plan, not the first 50");
  cmd->add_option("--priority", submit.priority,
                  "priority class: high, normal or low (default: the workflow's priority, else "
                  "normal); longhauld says who may use which")
      ->check(CLI::IsMember({"high", "normal", "low"}));
  cmd->add_option("--budget", submit.budget,
                  "the run's GPU-hour budget (over the workflow's budget): at 100 % it gets no "
                  "new attempts until an admin raises it")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--budget-hard", submit.budget_hard,
                "with --budget: at 100 % also stop the run's running attempts");
  cmd->callback([&] { action = [&](CommandContext& c) { return Submit(c, submit); }; });

  PivotOptions pivot;
  cmd = app.add_subcommand(
      "pivot", "run an earlier run's workflow again with changes, reusing what did not change");
  cmd->add_option("run", pivot.run_id, "the run to pivot from")->required()->check(RunIdCheck());
  cmd->add_option("--set", pivot.sets, "change a param: NAME=VALUE (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--from", pivot.from_stage, "re-run this stage and everything after it");
  cmd->add_flag("--watch", pivot.watch, "then follow the new run, as `watch` does");
  cmd->add_flag("--no-cache", pivot.no_cache, "run every stage, reuse nothing");
  cmd->add_flag("--dry-run", pivot.dry_run, "print the plan, start nothing");
  cmd->add_flag("--all", pivot.all, "print every stage of a big plan, not the first 50");
  cmd->callback([&] { action = [&](CommandContext& c) { return Pivot(c, pivot); }; });

  CompareOptions compare;
  cmd = app.add_subcommand("compare", "two runs side by side: params, stages, metrics");
  cmd->add_option("a", compare.a, "the first run")->required()->check(RunIdCheck());
  cmd->add_option("b", compare.b, "the second run")->check(RunIdCheck());
  cmd->add_option("--metric", compare.metrics,
                  "only this metric: NAME, STAGE.NAME or STAGE (repeatable)");
  cmd->add_flag("--all-params", compare.all_params, "show every param, not only those that differ");
  cmd->callback([&] {
    action = [&](CommandContext& c) {
      if (compare.b == 0) {
        return c.Fail(absl::InvalidArgumentError(
            "compare: needs two runs, as in `longhaul compare 3 4` (only run " +
            std::to_string(compare.a) + " was given)"));
      }
      return CompareRuns(c, compare);
    };
  });

  LineageOptions lineage;
  cmd = app.add_subcommand("lineage", "where a stage's result came from and which stages used it");
  cmd->add_option("run", lineage.run_id, "the run")->required();
  cmd->add_option("stage", lineage.stage, "the stage")->required();
  cmd->callback([&] { action = [&](CommandContext& c) { return StageLineage(c, lineage); }; });

  RunsOptions runs;
  cmd = app.add_subcommand("runs", "list runs, newest first");
  cmd->add_option("--status", runs.status, "only runs in this status (running, failed, ...)");
  cmd->add_option("--workflow", runs.workflow,
                  "only runs whose workflow name contains this (any case)");
  cmd->add_option("--limit", runs.limit, "at most this many runs (default 50)");
  cmd->add_option("--tag", runs.tag, "only the run whose stage tag NAME names");
  cmd->callback([&] { action = [&](CommandContext& c) { return ListRuns(c, runs); }; });

  ShowOptions show;
  cmd = app.add_subcommand("show",
                           "a run: header, stages, outputs, metrics, artifacts; or one stage");
  cmd->add_option("run", show.run_id, "run id")->required()->check(RunIdCheck());
  cmd->add_option("stage", show.stage, "only this stage");
  cmd->add_flag("--attempts", show.attempts, "also list every attempt of every stage");
  cmd->add_flag("--all", show.all, "every stage of a big run, not a summary");
  cmd->add_flag("--why", show.why,
                "with STAGE: why it ran or was reused, and what went into its cache key");
  cmd->add_flag("--watch", show.watch,
                "print it again as it changes until the run ends; exit code from its result");
  cmd->add_option("--interval", show.interval, "with --watch: how often to ask (default 2s)");
  cmd->add_option("--sweep", show.sweep,
                  "the items of this foreach stage as one table: values, status, final and best "
                  "metric, steps, cost");
  cmd->add_option("--sort", show.sort,
                  "with --sweep: sort by item (default), status, final, best, steps, wall, "
                  "gpu-hours or a foreach key");
  cmd->callback([&] { action = [&](CommandContext& c) { return ShowRun(c, show); }; });

  LogsOptions logs;
  cmd = app.add_subcommand("logs", "print a stage's log (stdout by default)");
  cmd->add_option("run", logs.run_id, "run id")->required()->check(RunIdCheck());
  cmd->add_option("stage", logs.stage, "stage name")->required();
  cmd->add_option("--attempt", logs.attempt, "attempt number (default: the latest)");
  cmd->add_flag("--stderr", logs.stderr_stream, "the stage's stderr instead of its stdout");
  cmd->add_flag("-f,--follow", logs.follow, "keep printing until the attempt has ended");
  cmd->add_option("--tail", logs.tail_bytes, "start this many bytes before the end");
  cmd->add_flag("--raw", logs.raw,
                "the log's bytes as they are, control characters included (the default when "
                "stdout is not a terminal)");
  cmd->add_option("--grep", logs.grep,
                  "print only the lines this regular expression (ECMAScript) finds");
  cmd->callback([&] { action = [&](CommandContext& c) { return Logs(c, logs); }; });

  int64_t cancel_id = 0;
  cmd = app.add_subcommand("cancel", "cancel a run: stop its running stages");
  cmd->add_option("run", cancel_id, "run id")->required()->check(RunIdCheck());
  cmd->callback([&] { action = [&](CommandContext& c) { return CancelRun(c, cancel_id); }; });

  int64_t retry_id = 0;
  std::string retry_stage;
  cmd = app.add_subcommand(
      "retry",
      "re-run a stage (default: every failed, cancelled or skipped stage) and its "
      "not-succeeded dependents");
  cmd->add_option("run", retry_id, "run id")->required()->check(RunIdCheck());
  cmd->add_option("stage", retry_stage, "stage name");
  cmd->callback(
      [&] { action = [&](CommandContext& c) { return RetryRun(c, retry_id, retry_stage); }; });

  std::string validate_file;
  cmd = app.add_subcommand("validate", "check a workflow file locally and print its stages");
  cmd->add_option("file", validate_file, "workflow file")->required();
  cmd->callback([&] {
    remote = false;
    action = [&](CommandContext& c) { return Validate(c, validate_file); };
  });

  cmd = app.add_subcommand("agents", "list the node agents");
  cmd->callback([&] { action = [&](CommandContext& c) { return ListAgents(c); }; });

  AuditOptions audit;
  cmd = app.add_subcommand("audit", "who changed what, when and from where (admin)");
  cmd->add_option("--limit", audit.limit, "at most this many entries (default 50)");
  cmd->add_option("--before", audit.before_id, "only entries older than this id (page on)");
  cmd->callback([&] { action = [&](CommandContext& c) { return ListAudit(c, audit); }; });

  GcOptions gc;
  cmd = app.add_subcommand(
      "gc",
      "remove ended runs' logs, outputs and events by age or count; keep their summaries "
      "and whatever the cache reuses (admin)");
  cmd->add_flag("--dry-run", gc.dry_run, "say what would go and how much; remove nothing");
  cmd->add_option("--older-than", gc.older_than, "runs that ended longer ago (30d, 12h, ...)");
  cmd->add_option("--keep", gc.keep_last, "per workflow, collect runs beyond the newest N");
  cmd->add_option("--workflow", gc.workflow, "only this workflow's runs");
  cmd->add_option("--run", gc.runs, "exactly these ended runs (repeatable)");
  cmd->callback([&] { action = [&](CommandContext& c) { return CollectGarbage(c, gc); }; });

  NotifyListOptions notify_list;
  NotifyTestOptions notify_test;
  CLI::App* notify_cmd = app.add_subcommand("notify", "notifications: deliveries and a test");
  notify_cmd->require_subcommand(1);
  cmd = notify_cmd->add_subcommand("list", "notifications and their delivery, newest first");
  cmd->add_option("--run", notify_list.run_id, "only those of this run");
  cmd->add_option("--limit", notify_list.limit, "at most this many (default 50)");
  cmd->add_option("--before", notify_list.before_id, "only those older than this id (page on)");
  cmd->callback([&] { action = [&](CommandContext& c) { return NotifyList(c, notify_list); }; });
  cmd = notify_cmd->add_subcommand(
      "test", "send a sample notification through longhauld's sinks, or those given (admin)");
  cmd->add_option("--webhook", notify_test.webhooks,
                  "an http:// or https:// URL instead (repeatable)");
  cmd->add_option("--format", notify_test.format, "json or slack, for --webhook");
  cmd->add_option("--command", notify_test.command,
                  "a command instead: the rest of the line (longhauld needs "
                  "--notify-allow-commands)")
      ->expected(1, -1);
  cmd->callback([&] { action = [&](CommandContext& c) { return NotifyTest(c, notify_test); }; });

  std::string backup_path;
  CLI::App* admin_cmd = app.add_subcommand("admin", "administer longhauld (admin)");
  admin_cmd->require_subcommand(1);
  cmd = admin_cmd->add_subcommand(
      "backup",
      "longhauld copies its database to FILE on its own host (online; checked with "
      "integrity_check); FILE must be an absolute path that does not exist yet");
  cmd->add_option("file", backup_path, "the copy to make, on the coordinator's host")->required();
  cmd->callback([&] { action = [&](CommandContext& c) { return Backup(c, backup_path); }; });

  std::string gpu_target, gpu_reason;
  CLI::App* gpu_cmd = app.add_subcommand("gpu", "GPUs out of service by hand, and back (admin)");
  gpu_cmd->require_subcommand(1);
  cmd = gpu_cmd->add_subcommand(
      "drain", "offer GPU(s) to no new attempt; what runs there runs to its end (admin, audited)");
  cmd->add_option("target", gpu_target, "AGENT (every GPU of it) or AGENT:GPU")->required();
  cmd->add_option("--reason", gpu_reason, "why, kept with the GPU's state and in the audit trail");
  cmd->callback([&] {
    action = [&](CommandContext& c) { return DrainGpu(c, gpu_target, gpu_reason, false); };
  });
  cmd = gpu_cmd->add_subcommand(
      "undrain", "bring drained or quarantined GPU(s) back into service (admin, audited)");
  cmd->add_option("target", gpu_target, "AGENT (every GPU of it) or AGENT:GPU")->required();
  cmd->add_option("--reason", gpu_reason, "why, for the audit trail");
  cmd->callback([&] {
    action = [&](CommandContext& c) { return DrainGpu(c, gpu_target, gpu_reason, true); };
  });

  std::string agent_id, drain_at, drain_reason;
  CLI::App* agent_cmd = app.add_subcommand("agent", "maintenance windows of agents (admin)");
  agent_cmd->require_subcommand(1);
  cmd = agent_cmd->add_subcommand(
      "drain",
      "from now on, offer the agent only attempts that end (timeout + grace) before --at; at "
      "that time stop what still runs there and queue it again, no retry spent (admin, audited)");
  cmd->add_option("agent", agent_id, "the agent's id")->required();
  cmd->add_option("--at", drain_at,
                  "when the maintenance begins: an RFC 3339 time (2026-12-05T14:00:00Z) or a "
                  "time from now (+2h); default now");
  cmd->add_option("--reason", drain_reason,
                  "why, shown with the agent, in the wait reasons and in the audit trail");
  cmd->callback([&] {
    action = [&](CommandContext& c) {
      return DrainAgent(c, agent_id, drain_at, drain_reason, false);
    };
  });
  cmd = agent_cmd->add_subcommand(
      "undrain",
      "end the agent's maintenance window: it is offered new attempts again (admin, "
      "audited)");
  cmd->add_option("agent", agent_id, "the agent's id")->required();
  cmd->add_option("--reason", drain_reason, "why, for the audit trail");
  cmd->callback([&] {
    action = [&](CommandContext& c) { return DrainAgent(c, agent_id, "", drain_reason, true); };
  });

  int64_t budget_run = 0;
  ScopeBudgetOptions scope_budget;
  cmd = app.add_subcommand("budget",
                           "set the GPU-hour budget of a run, or of a team's or a workflow's runs; "
                           "what it paused continues (admin, audited)");
  CLI::Option* budget_run_opt = cmd->add_option("run", budget_run, "run id")->check(RunIdCheck());
  cmd->add_option("--gpu-hours", scope_budget.gpu_hours,
                  "the new budget in GPU-hours (required unless --rm)")
      ->check(CLI::PositiveNumber);
  bool budget_remove = false;
  cmd->add_flag("--rm", budget_remove,
                "with --team/--workflow: remove the budget; the runs it paused continue");
  CLI::Option* budget_team =
      cmd->add_option("--team", scope_budget.team, "the budget of every run of this team");
  CLI::Option* budget_workflow = cmd->add_option(
      "--workflow", scope_budget.workflow, "the budget of every run of the workflow of this name");
  budget_team->excludes(budget_run_opt)->excludes(budget_workflow);
  budget_workflow->excludes(budget_run_opt);
  cmd->add_option("--period", scope_budget.period,
                  "with --team/--workflow: the length of a period, from when the budget was first "
                  "set (default 30d; the use starts over each period)");
  cmd->add_flag("--hard", scope_budget.hard,
                "with --team/--workflow: at 100 % also stop the running attempts of its runs");
  cmd->callback([&] {
    action = [&](CommandContext& c) {
      bool scoped = !scope_budget.team.empty() || !scope_budget.workflow.empty();
      if (budget_remove) {
        if (!scoped)
          return c.Fail(absl::InvalidArgumentError("budget --rm: give --team or --workflow"));
        return RemoveScopeBudget(c, scope_budget);
      }
      if (scope_budget.gpu_hours <= 0) {
        return c.Fail(absl::InvalidArgumentError("budget: --gpu-hours is required"));
      }
      if (scoped) return SetScopeBudget(c, scope_budget);
      if (budget_run == 0) {
        return c.Fail(
            absl::InvalidArgumentError("budget: give a run id, --team NAME or --workflow NAME"));
      }
      if (!scope_budget.period.empty() || scope_budget.hard) {
        return c.Fail(absl::InvalidArgumentError(
            "budget: --period and --hard go with --team or --workflow (a run's budget is hard "
            "or not from its submission: --budget-hard)"));
      }
      return SetBudget(c, budget_run, scope_budget.gpu_hours);
    };
  });

  AddQuotaCommands(app, action);

  cmd = app.add_subcommand("budgets",
                           "list the GPU-hour budgets of teams and workflows: limit, use, state");
  cmd->callback([&] { action = [&](CommandContext& c) { return ListBudgets(c); }; });

  ReserveOptions reserve;
  cmd = app.add_subcommand(
      "reserve",
      "hold GPUs of an agent for a team or a user from --from until --until: others' attempts "
      "go there only on its other GPUs, and at --from what of theirs runs on the reserved ones "
      "is stopped and queued again, no retry spent (admin, audited)");
  cmd->add_option("agent", reserve.agent, "the agent's id")->required();
  cmd->add_option("--gpus", reserve.gpus, "how many of its GPUs, or all")->required();
  CLI::Option* reserve_team = cmd->add_option("--team", reserve.team, "the team they are held for");
  CLI::Option* reserve_user = cmd->add_option("--user", reserve.user, "the user they are held for");
  reserve_team->excludes(reserve_user);
  cmd->add_option("--from", reserve.from,
                  "when the window begins: an RFC 3339 time (2026-12-05T14:00:00Z) or a time "
                  "from now (+2h); default now");
  cmd->add_option("--until", reserve.until, "when it ends, in the same forms")->required();
  cmd->add_option("--reason", reserve.reason,
                  "why, shown with the agent, in the wait reasons and in the audit trail")
      ->required();
  cmd->callback([&] { action = [&](CommandContext& c) { return Reserve(c, reserve); }; });

  bool reservations_all = false;
  cmd = app.add_subcommand("reservations",
                           "list the reservations of agents' GPUs in force and to come");
  cmd->add_flag("--all", reservations_all, "also the ended and cancelled ones");
  cmd->callback(
      [&] { action = [&](CommandContext& c) { return ListReservations(c, reservations_all); }; });

  int64_t unreserve_id = 0;
  std::string unreserve_reason;
  cmd = app.add_subcommand("unreserve",
                           "cancel a reservation: its GPUs are everyone's again (admin, audited)");
  cmd->add_option("id", unreserve_id, "the reservation's id (longhaul reservations)")->required();
  cmd->add_option("--reason", unreserve_reason, "why, for the audit trail")->required();
  cmd->callback([&] {
    action = [&](CommandContext& c) { return Unreserve(c, unreserve_id, unreserve_reason); };
  });

  std::vector<std::string> tag_args;
  bool tag_force = false, tag_remove = false;
  cmd = app.add_subcommand(
      "tag", "name a succeeded stage's result for later workflows: ${tags.NAME.outputs.OUT}");
  cmd->add_option("args", tag_args, "RUN STAGE NAME (with --rm: NAME)")->required();
  cmd->add_flag("--force,-f", tag_force, "move NAME when it is already set on another stage");
  cmd->add_flag("--rm", tag_remove, "remove tag NAME");
  cmd->callback([&] {
    action = [&](CommandContext& c) { return TagCommand(c, tag_args, tag_force, tag_remove); };
  });

  int64_t priority_run = 0;
  std::string priority_class;
  cmd = app.add_subcommand("priority",
                           "change a run's priority class; its waiting stages move in the queue "
                           "(--priority-allow as at submission, admins always; audited)");
  cmd->add_option("run", priority_run, "run id")->required()->check(RunIdCheck());
  cmd->add_option("class", priority_class, "high, normal or low")->required();
  cmd->callback([&] {
    action = [&](CommandContext& c) { return SetPriority(c, priority_run, priority_class); };
  });
  int64_t tags_run = 0;
  cmd = app.add_subcommand("tags", "list the tags: NAME RUN STAGE SET BY WHEN");
  cmd->add_option("--run", tags_run, "only the tags on this run's stages")->check(RunIdCheck());
  cmd->callback([&] { action = [&](CommandContext& c) { return ListTags(c, tags_run); }; });

  int64_t watch_id = 0;
  std::string watch_interval = "10s";
  cmd = app.add_subcommand("watch", "follow a run live until it ends; exit code from its result");
  cmd->add_option("run", watch_id, "run id")->required()->check(RunIdCheck());
  cmd->add_option("--interval", watch_interval,
                  "when stdout is not a terminal: at most one progress line per stage this "
                  "often (default 10s); state changes are printed at once");
  cmd->callback(
      [&] { action = [&](CommandContext& c) { return Watch(c, watch_id, watch_interval); }; });

  TokenOptions token;
  CLI::App* token_cmd = app.add_subcommand("token", "make tokens for longhauld's --tokens file");
  token_cmd->require_subcommand(1);
  cmd =
      token_cmd->add_subcommand("new", "a new random token into FILE; prints its tokens-file line");
  cmd->add_option("role", token.role, "viewer, operator or admin")->required();
  cmd->add_option("name", token.name, "who holds it (letters, digits, . _ - @)")->required();
  cmd->add_option("--out", token.out, "the file to create for the token (mode 0600)")->required();
  cmd->add_option("--team", token.team, "the team its runs count for: the line's TEAM column");
  cmd->callback([&] {
    remote = false;
    action = [&](CommandContext& c) { return TokenNew(c, token); };
  });
  cmd = token_cmd->add_subcommand("hash", "the tokens-file line for the token read from stdin");
  cmd->add_option("role", token.role, "viewer, operator or admin")->required();
  cmd->add_option("name", token.name, "who holds it")->required();
  cmd->add_option("--team", token.team, "the team its runs count for: the line's TEAM column");
  cmd->callback([&] {
    remote = false;
    action = [&](CommandContext& c) { return TokenHash(c, token); };
  });

  std::string shell;
  cmd = app.add_subcommand("completion",
                           "print a completion script for bash or zsh: eval \"$(longhaul "
                           "completion bash)\" in ~/.bashrc");
  cmd->add_option("shell", shell, "bash or zsh")->required();
  cmd->callback([&] {
    remote = false;
    action = [&](CommandContext& c) -> int {
      if (WriteCompletion(app, shell, c.out())) return kExitOk;
      return c.Fail(absl::InvalidArgumentError("completion: '" + shell +
                                               "' is not a shell longhaul completes; bash or zsh"));
    };
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(e, *env.out, *env.err) == 0 ? kExitOk : kExitUsage;  // --help
    }
    *env.err << "longhaul: " << UsageError(app, e, argc, argv) << '\n';
    return kExitUsage;
  }
  if (!action) {
    *env.err << "longhaul: no command given (`longhaul --help` lists them)\n";
    return kExitUsage;
  }
  CommandContext ctx{env, ResolveCoordinatorAddress(coordinator_flag, env), json, nullptr};
  if (remote) {
    Result<ClientCredentials> creds = ResolveCredentials(token_file, tls_ca, env.vars);
    if (!creds.ok()) return ctx.Fail(creds.status());
    if (Status s = CheckTokenTransport(ctx.address, *creds); !s.ok()) return ctx.Fail(s);
    ctx.coordinator = env.connect(ctx.address, *creds);
  }
  return action(ctx);
}

}  // namespace longhaul::cli
