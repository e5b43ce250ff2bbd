#include "daemon/server/coordinator_flags.h"

#include "core/config/config_checks.h"
#include "core/duration.h"
#include "core/strings.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::server {
namespace {

std::string DirOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash + 1);
}

}  // namespace

void AddCoordinatorFlags(CLI::App& app, CoordinatorFlags* f) {
  CoordinatorOptions& options = f->options;
  app.add_option("--state-dir", options.state_dir, "where the database and address file live")
      ->capture_default_str();
  app.add_option("--db", options.db_path, "SQLite file (default: STATE/longhaul.db)");
  app.add_option("--listen", options.listen, "gRPC address; port 0 picks a free port")
      ->capture_default_str();
  app.add_option("--addr-file", options.addr_file,
                 "file to write the bound address to (default: STATE/coordinator.addr)");
  options.http.listen = "127.0.0.1:8080";
  app.add_option("--http", options.http.listen,
                 "HTTP address of the UI and JSON API ('' turns it off; port 0 picks a free "
                 "port); HTTPS with --tls-cert; off loopback it needs --tokens and --tls-cert, "
                 "or --insecure")
      ->capture_default_str();
  app.add_option("--http-host", options.http.hosts,
                 "another name (NAME or NAME:PORT) clients may use in Host for the HTTP "
                 "listener; repeatable. Loopback names and the --http host are always allowed; "
                 "other names get 421 (against DNS rebinding)");
  app.add_option("--http-header-timeout", f->http_header_timeout,
                 "an HTTP connection whose request header (and TLS handshake) is not complete "
                 "this long after it opens, or after its first byte, is closed")
      ->capture_default_str();
  app.add_option("--http-max-connections", options.http.max_connections,
                 "open HTTP connections at most; past it a new one gets 503")
      ->capture_default_str();
  app.add_option("--http-addr-file", options.http_addr_file,
                 "file to write the bound HTTP address to (default: STATE/http.addr)");
  app.add_option("--ui-dir", options.http.ui_dir,
                 "serve the UI from this folder (web/dist) instead of the built-in copy");
  app.add_option("--http-max-streams", options.http.sse.max_streams,
                 "open watch streams (SSE) at most; past it a watch gets 503")
      ->capture_default_str();
  app.add_option("--sse-heartbeat", f->sse_heartbeat,
                 "comment sent on idle watch streams this often")
      ->capture_default_str();
  app.add_option("--agent-timeout", f->agent_timeout,
                 "an agent silent this long is unreachable; its attempts are unknown")
      ->capture_default_str();
  app.add_option("--lost-after", f->lost_after,
                 "an agent silent this long is lost; its attempts are lost and retried")
      ->capture_default_str();
  app.add_option("--heartbeat", f->heartbeat, "heartbeat interval asked of agents")
      ->capture_default_str();
  app.add_option("--gpu-cooldown", f->gpu_cooldown,
                 "a quarantined GPU's wait before its agent is asked for a pre-flight, and "
                 "between pre-flights (docs/gpus.md)")
      ->capture_default_str();
  app.add_option("--gpu-return-passes", options.scheduler.gpus.passes_to_return,
                 "pre-flights a quarantined GPU must pass in a row to return to service")
      ->capture_default_str();
  app.add_option("--gpu-service-hang", f->gpu_service_hang,
                 "a service (without its own gpu_idle) whose GPUs sit idle this long while a "
                 "consumer of it runs is hung: on_gpu_idle acts (0: never)")
      ->capture_default_str();
  app.add_option("--gpu-node-fault-limit", options.scheduler.gpus.node_fault_limit,
                 "GPUs of one agent quarantined at once that make a GPU fault's retry avoid "
                 "the whole agent (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  SecurityOptions& sec = options.security;
  app.add_option("--tokens", sec.tokens_file,
                 "file of 'ROLE NAME sha256:HEX [TEAM]' lines: the tokens clients must send (re-read "
                 "on SIGHUP); without it longhauld listens on loopback only");
  app.add_option("--tls-cert", sec.tls_cert_file,
                 "PEM certificate: serve the client API and the HTTP listener over TLS");
  app.add_option("--tls-key", sec.tls_key_file, "PEM private key of --tls-cert");
  app.add_option("--agent-listen", sec.agent_listen,
                 "a separate address for agents, with mutual TLS (needs --agent-ca, --tls-cert)");
  app.add_option("--agent-ca", sec.agent_ca_file,
                 "PEM CA whose certificates agents must present; the certificate names the agent");
  app.add_option("--agent-addr-file", options.agent_addr_file,
                 "file to write the bound agent address to (default: STATE/agent.addr)");
  app.add_flag("--insecure", sec.insecure,
               "listen off loopback without tokens, TLS or agent certificates (not for shared "
               "networks: see docs/security.md)");
  NotifyOptions& notify = options.notify;
  app.add_option("--notify-webhook", notify.spec.webhooks,
                 "http:// or https:// URL sent a JSON POST for each event of --notify-on; "
                 "repeatable");
  app.add_option("--notify-format", notify.spec.format,
                 "body of the --notify-webhook POSTs: json (the event) or slack ({\"text\"})")
      ->capture_default_str();
  app.add_option("--notify-command", f->notify_command,
                 "command run for each event of --notify-on, the event's JSON on stdin and "
                 "LONGHAUL_EVENT=KIND; split on spaces, no shell");
  app.add_option("--notify-on", f->notify_on,
                 "comma-separated events to notify (default every one): run_succeeded, "
                 "run_failed, run_cancelled, stage_failed, stage_stalled, service_lost, "
                 "agent_lost, gpu_fault, stage_gpu_idle, budget_warning, budget_reached");
  app.add_option("--notify-tries", notify.retry.max_tries,
                 "tries of each notification before it is failed")
      ->capture_default_str();
  app.add_option("--notify-backoff", f->notify_backoff,
                 "wait after a notification's first failed try; doubles after each")
      ->capture_default_str();
  app.add_option("--notify-max-backoff", f->notify_max_backoff,
                 "the longest wait between two tries of a notification")
      ->capture_default_str();
  app.add_option("--notify-timeout", f->notify_timeout,
                 "one webhook request or command at most this long")
      ->capture_default_str();
  app.add_option("--notify-ca", notify.ca_file,
                 "PEM CA file that https webhooks' certificates must chain to (default: the "
                 "system's CA store)");
  app.add_flag("--notify-allow-commands", notify.allow_commands,
               "let workflows (notify.command) and `longhaul notify test --command` run a "
               "command on this host as longhauld's user; without it they are refused");
  app.add_option("--notify-ui-url", notify.ui_url,
                 "the UI's URL as readers of notifications reach it, for the run's link "
                 "(default: the --http listener's)");
  app.add_option("--priority-allow", f->priority_allow,
                 "CLASS=WHO[,WHO...]: who may submit runs of priority class high, normal or "
                 "low; WHO is role:ROLE (that role or above), team:NAME, user:NAME or *; "
                 "repeatable. Default: high=role:admin, the others anyone");
  app.add_option("--quota", f->quota,
                 "team:NAME=ITEM[,ITEM...] or user:NAME=...: a quota of GPUs; ITEM is gpus:N "
                 "(N GPUs at once guaranteed), borrow:M (up to M in all while no one under "
                 "their guarantee waits) or gpu_hours:H/PERIOD (at most H GPU-hours in any "
                 "PERIOD, as 7d); repeatable (docs/scheduling.md)");
  app.add_option("--budget", f->budget,
                 "team:NAME=HOURS[/PERIOD][:hard] or workflow:NAME=...: a GPU-hour budget of "
                 "the scope's runs per PERIOD (default 30d), set at start where no budget is "
                 "stored (one set with `longhaul budget` wins); repeatable (docs/scheduling.md)");
  app.add_option("--teams", f->teams,
                 "USER=TEAM[,USER=TEAM...]: the team of runs whose token names none; "
                 "repeatable");
  app.add_option("--fair-share-half-life", f->fair_share_half_life,
                 "order the queue within a class by fair share, past GPU use counting half "
                 "as much this much later (0: by age alone)")
      ->capture_default_str();
  app.add_option("--retention-age", f->retention_age,
                 "collect ended runs older than this (their logs, outputs and events; the "
                 "summary stays); 0: by age never")
      ->capture_default_str();
  app.add_option("--retention-keep", options.retention.keep_last,
                 "collect ended runs beyond the newest N of each workflow; 0: by count never "
                 "(a workflow's retention block overrides both for its runs)")
      ->capture_default_str();
  app.add_option("--retention-interval", f->retention_interval,
                 "how often retention runs (the policy above, and workflows' own retention "
                 "blocks)")
      ->capture_default_str();
  app.add_option("--backup", f->backup,
                 "copy the database (--db, or STATE/longhaul.db) to this new file, check the "
                 "copy with integrity_check and exit; safe while a longhauld uses the database "
                 "(command line only)");
  app.add_flag("--new-cluster", options.scheduler.new_cluster,
               "accept agents that served another cluster (another store): they adopt this "
               "store's cluster id and their old attempts are stopped; without it they are "
               "refused (docs/coordinator.md, \"Identity\")");
  app.add_option("--log-level", f->log_level, "debug, info, warn or error")->capture_default_str();
  app.add_option("--log-file", f->log_file, "also log to this file");
}

std::vector<std::string> CheckCoordinatorFlags(CoordinatorFlags* f,
                                               const config::CliConfig& config) {
  std::vector<std::string> errors;
  auto check = [&](std::string_view key, const Status& s) {
    if (!s.ok()) errors.push_back(config.Error(key, ToStd(s.message())));
  };
  CoordinatorOptions& o = f->options;
  auto duration = [&](std::string_view key, const std::string& value, int64_t* ms) {
    auto parsed = ParseDurationMs(value);
    if (parsed.ok()) {
      *ms = *parsed;
    } else {
      check(key, parsed.status());
    }
  };
  duration("agent-timeout", f->agent_timeout, &o.scheduler.agent_timeout_ms);
  duration("lost-after", f->lost_after, &o.scheduler.lost_after_ms);
  duration("heartbeat", f->heartbeat, &o.scheduler.heartbeat_interval_ms);
  duration("gpu-cooldown", f->gpu_cooldown, &o.scheduler.gpus.cooldown_ms);
  duration("gpu-service-hang", f->gpu_service_hang, &o.scheduler.gpu_service_hang_ms);
  if (o.scheduler.gpus.passes_to_return < 1) {
    errors.push_back(config.Error("gpu-return-passes", "must be at least 1"));
  }
  duration("sse-heartbeat", f->sse_heartbeat, &o.http.sse.heartbeat_ms);
  duration("http-header-timeout", f->http_header_timeout, &o.http.header_timeout_ms);
  duration("notify-backoff", f->notify_backoff, &o.notify.retry.backoff_ms);
  duration("notify-max-backoff", f->notify_max_backoff, &o.notify.retry.max_backoff_ms);
  duration("notify-timeout", f->notify_timeout, &o.notify.timeout_ms);
  o.notify.spec.command.clear();
  for (const std::string& word : StrSplit(f->notify_command, ' ')) {
    if (!word.empty()) o.notify.spec.command.push_back(word);
  }
  o.notify.spec.on.clear();
  for (const std::string& kind : StrSplit(f->notify_on, ',')) {
    std::string_view k = StripWhitespace(kind);
    if (!k.empty()) o.notify.spec.on.emplace_back(k);
  }
  check("notify-webhook", workflow::CheckNotifySpec(o.notify.spec, "--notify-*"));
  if (o.notify.retry.max_tries < 1) {
    errors.push_back(config.Error("notify-tries", "expected 1 or more"));
  }
  duration("retention-age", f->retention_age, &o.retention.older_than_ms);
  duration("retention-interval", f->retention_interval, &o.retention_interval_ms);
  if (Result<scheduler::PriorityPolicy> p = scheduler::PriorityPolicy::Parse(f->priority_allow);
      p.ok()) {
    o.priority = std::move(*p);
  } else {
    errors.push_back(config.Error("priority-allow", ToStd(p.status().message())));
  }
  if (Result<scheduler::Quotas> q = scheduler::Quotas::Parse(f->quota); q.ok()) {
    o.scheduler.quotas = std::move(*q);
  } else {
    errors.push_back(config.Error("quota", ToStd(q.status().message())));
  }
  if (Result<std::vector<scheduler::ConfigBudget>> b = scheduler::ParseConfigBudgets(f->budget);
      b.ok()) {
    o.scheduler.budgets = std::move(*b);
  } else {
    errors.push_back(config.Error("budget", ToStd(b.status().message())));
  }
  if (Result<std::map<std::string, std::string>> t = scheduler::ParseTeams(f->teams); t.ok()) {
    o.teams = std::move(*t);
  } else {
    errors.push_back(config.Error("teams", ToStd(t.status().message())));
  }
  duration("fair-share-half-life", f->fair_share_half_life, &o.scheduler.fair_share_half_life_ms);
  if (o.retention.keep_last < 0)
    errors.push_back(config.Error("retention-keep", "must be 0 or more"));
  if (o.retention_interval_ms <= 0) {
    errors.push_back(config.Error("retention-interval", "must be more than 0"));
  }

  check("listen", CheckHostPort(o.listen));
  if (!o.http.listen.empty()) check("http", CheckHostPort(o.http.listen));
  SecurityOptions& sec = o.security;
  if (!sec.agent_listen.empty()) check("agent-listen", CheckHostPort(sec.agent_listen));
  check("state-dir", CheckDirUsable(o.state_dir));
  if (!o.db_path.empty()) check("db", CheckDirUsable(DirOf(o.db_path)));
  for (auto [key, path] :
       {std::pair{"addr-file", &o.addr_file}, std::pair{"http-addr-file", &o.http_addr_file},
        std::pair{"agent-addr-file", &o.agent_addr_file}, std::pair{"log-file", &f->log_file}}) {
    if (!path->empty()) check(key, CheckDirUsable(DirOf(*path)));
  }
  for (auto [key, path] :
       {std::pair{"tokens", &sec.tokens_file}, std::pair{"tls-cert", &sec.tls_cert_file},
        std::pair{"tls-key", &sec.tls_key_file}, std::pair{"agent-ca", &sec.agent_ca_file},
        std::pair{"notify-ca", &o.notify.ca_file}}) {
    if (!path->empty()) check(key, CheckReadable(*path));
  }
  if (!o.http.ui_dir.empty()) check("ui-dir", CheckReadable(o.http.ui_dir));
  check("log-level", CheckLogLevel(f->log_level));
  return errors;
}

std::vector<std::string> CheckCoordinatorExposure(const CoordinatorFlags& f,
                                                  const config::CliConfig& config) {
  std::vector<std::string> errors;
  const CoordinatorOptions& o = f.options;
  if (auto s = CheckSecurity(o.listen, o.security); !s.ok()) {
    errors.push_back(config.Error("listen", ToStd(s.status().message())));
  }
  if (auto s = CheckHttpSecurity(o.http.listen, o.security); !s.ok()) {
    errors.push_back(config.Error("http", ToStd(s.status().message())));
  }
  return errors;
}

}  // namespace longhaul::server
