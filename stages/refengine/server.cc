#include "stages/refengine/server.h"

#include <unistd.h>

#include <iostream>

#include "core/fs.h"
#include "core/logging.h"
#include "core/strings.h"
#include "stages/refengine/server_impl.h"

namespace longhaul::refengine {

namespace asio = boost::asio;
using refmodel::Drafter;
using refmodel::TargetModel;

namespace {

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Status ValidateOptions(const ServerOptions& o) {
  if (o.port < 0 || o.port > 65535) {
    return absl::InvalidArgumentError(StrCat("--port ", o.port, " out of range [0, 65535]"));
  }
  if (!o.drafter_dir.empty() && (o.num_speculative_tokens < 1 || o.num_speculative_tokens > 16)) {
    return absl::InvalidArgumentError(
        StrCat("--num-speculative-tokens ", o.num_speculative_tokens, " out of range [1, 16]"));
  }
  if (o.max_batch < 1) return absl::InvalidArgumentError("--max-batch must be >= 1");
  if (o.max_model_len < 2) return absl::InvalidArgumentError("--max-model-len must be >= 2");
  for (auto [name, v] : {std::pair{"--target-step-ms", o.target_step_ms},
                         std::pair{"--draft-step-ms", o.draft_step_ms},
                         std::pair{"--prefill-ms-per-token", o.prefill_ms_per_token},
                         std::pair{"--load-delay-s", o.load_delay_s},
                         std::pair{"--health-generate-timeout-s", o.health_generate_timeout_s}}) {
    if (v < 0) return absl::InvalidArgumentError(StrCat(name, " must be >= 0"));
  }
  if (o.reasoning_field != "reasoning" && o.reasoning_field != "reasoning_content") {
    return absl::InvalidArgumentError(StrCat("--reasoning-field '", o.reasoning_field,
                                             "' (expected reasoning or reasoning_content)"));
  }
  if (o.drafter_misaligned && o.drafter_dir.empty()) {
    return absl::InvalidArgumentError("--drafter-misaligned needs --drafter");
  }
  return OkStatus();
}

// Keep-alive, no read timeout (a benchmark's client may hold a connection idle), and a request
// that is not HTTP answered the way OpenAI's API answers errors.
net::HttpServer::Options HttpOptions() {
  net::HttpServer::Options o;
  o.bad_request = [](std::string_view problem) {
    return net::BadRequestAnswer{"application/json",
                                 ErrorJson(400, StrCat("bad HTTP request: ", problem))};
  };
  return o;
}

}  // namespace

RefEngineServer::Impl::Impl(ServerOptions options, std::ostream& out)
    : options_(std::move(options)),
      out_(out),
      http_(
          io_,
          [this](net::ServerRequest req, std::shared_ptr<net::HttpResponder> resp) {
            Handle(std::move(req), std::move(resp));
          },
          HttpOptions()),
      crash_([] {
        std::cerr << "refengine: --crash-after reached: exiting abruptly" << std::endl;
        ::_exit(1);
      }),
      delay_timer_(io_),
      signals_(io_) {}

RefEngineServer::Impl::~Impl() {
  Stop();
  if (loader_.joinable()) loader_.join();
}

Status RefEngineServer::Impl::Start() {
  RETURN_IF_ERROR(ValidateOptions(options_));
  started_at_ = std::chrono::steady_clock::now();
  if (!options_.fatal_log_line.empty()) std::cerr << options_.fatal_log_line << std::endl;
  ASSIGN_OR_RETURN(port_, http_.Listen(options_.host, options_.port));
  out_ << "listening on " << options_.host << ":" << port_ << std::endl;
  if (!options_.port_file.empty()) {
    Status s = WriteFileAtomic(options_.port_file, StrCat(port_, "\n"));
    if (!s.ok()) return Annotate(s, "--port-file");
  }
  if (options_.handle_signals) {
    signals_.add(SIGTERM);
    signals_.add(SIGINT);
    signals_.async_wait([this](boost::system::error_code ec, int) {
      if (!ec) Stop();
    });
  }
  StartLoading();
  return OkStatus();
}

void RefEngineServer::Impl::StartLoading() {
  // Training the target takes a moment; the server already answers /health (503) meanwhile.
  loader_ = std::thread([this] {
    auto t0 = std::chrono::steady_clock::now();
    std::string corpus = options_.corpus.empty() ? refmodel::DefaultCorpusPath() : options_.corpus;
    auto target = TargetModel::FromCorpusFile(corpus);
    std::unique_ptr<Drafter> drafter;
    Status status = target.status();
    if (status.ok() && !options_.drafter_dir.empty()) {
      auto d = Drafter::Load(options_.drafter_dir);
      status = d.status();
      if (status.ok())
        status = Annotate(d->CheckTarget(**target), StrCat("--drafter ", options_.drafter_dir));
      if (status.ok()) drafter = std::make_unique<Drafter>(std::move(*d));
    }
    double seconds = SecondsSince(t0);
    std::shared_ptr<TargetModel> model;
    if (status.ok()) model = std::move(*target);
    std::shared_ptr<Drafter> shared_drafter = std::move(drafter);
    asio::post(io_, [this, status, model, shared_drafter, seconds] {
      OnLoaded(status, model, shared_drafter, seconds);
    });
  });
}

void RefEngineServer::Impl::OnLoaded(Status status, std::shared_ptr<TargetModel> target,
                                     std::shared_ptr<Drafter> drafter, double seconds) {
  if (!status.ok()) {
    load_status_ = status;
    GetLogger("refengine")->error("load failed: {}", ToStd(status.message()));
    Stop();
    return;
  }
  target_ = std::move(target);
  drafter_ = std::move(drafter);
  EngineOptions eo;
  eo.max_batch = options_.max_batch;
  eo.num_speculative_tokens = options_.num_speculative_tokens;
  eo.feed = options_.drafter_misaligned ? refmodel::DraftFeed::kMisaligned
                                        : refmodel::DraftFeed::kCorrect;
  eo.target_step_ms = options_.target_step_ms;
  eo.draft_step_ms = options_.draft_step_ms;
  eo.prefill_ms_per_token = options_.prefill_ms_per_token;
  engine_ = std::make_unique<Engine>(target_.get(), drafter_.get(), eo);
  loop_ = std::make_unique<EngineLoop>(io_, engine_.get(), options_.hang);
  auto ready = [this, seconds] {
    loaded_ = true;
    out_ << "ready: model " << options_.model_name << " (vocab " << target_->vocab_size()
         << ", trained in " << seconds << " s), "
         << (drafter_
                 ? StrCat("drafter ", options_.drafter_dir, " k=", options_.num_speculative_tokens,
                          options_.drafter_misaligned ? " misaligned" : "")
                 : std::string("no drafter"))
         << std::endl;
  };
  double remaining = options_.load_delay_s - SecondsSince(started_at_);
  if (remaining <= 0) {
    ready();
    return;
  }
  delay_timer_.expires_after(std::chrono::microseconds(static_cast<int64_t>(remaining * 1e6)));
  delay_timer_.async_wait([ready](boost::system::error_code ec) {
    if (!ec) ready();
  });
}

Status RefEngineServer::Impl::Run() {
  auto guard = asio::make_work_guard(io_);
  io_.run();
  return load_status_;
}

void RefEngineServer::Impl::Stop() {
  if (stopping_.exchange(true)) return;
  asio::post(io_, [this] {
    http_.Stop();
    io_.stop();
  });
}

void RefEngineServer::Impl::Handle(net::ServerRequest req,
                                   std::shared_ptr<net::HttpResponder> resp) {
  const std::string& p = req.path;
  bool get = req.method == "GET" || req.method == "HEAD";
  if (req.method == "POST" && (p == "/v1/chat/completions" || p == "/v1/completions")) {
    Generate(req, std::move(resp), p == "/v1/chat/completions");
  } else if (get && p == "/health") {
    Health(*resp);
  } else if (get && p == "/health_generate") {
    HealthGenerate(std::move(resp));
  } else if (get && p == "/v1/models") {
    Models(*resp);
  } else if (get && p == "/metrics") {
    Metrics(*resp);
  } else if (get && p == "/get_server_info") {
    if (!loaded_) return resp->Send(503, "application/json", ErrorJson(503, "model is loading"));
    resp->Send(200, "application/json", ServerInfo(View()).dump());
  } else if (get && p == "/get_model_info") {
    resp->Send(200, "application/json",
               nlohmann::json{{"model_path", options_.model_name}, {"is_generation", true}}.dump());
  } else if (p == "/v1/chat/completions" || p == "/v1/completions" || p == "/health" ||
             p == "/metrics" || p == "/v1/models") {
    resp->Send(405, "application/json", ErrorJson(405, StrCat(req.method, " not allowed on ", p)));
  } else {
    resp->Send(404, "application/json", ErrorJson(404, StrCat("no route ", p)));
  }
}

void RefEngineServer::Impl::Health(net::HttpResponder& resp) {
  if (!loaded_) {
    resp.Send(503, "application/json", R"({"status":"loading"})");
    return;
  }
  resp.Send(200, "text/plain", "");
}

void RefEngineServer::Impl::HealthGenerate(std::shared_ptr<net::HttpResponder> resp) {
  if (!loaded_) {
    resp->Send(503, "application/json", R"({"status":"loading"})");
    return;
  }
  // SGLang's probe: a one-token generation that must come back within the timeout.
  EngineRequest r;
  r.id = next_id_++;
  r.prompt = target_->tokenizer().Encode("<|user|>\nhealth check<|end|>\n<|assistant|>\n");
  r.max_tokens = 1;
  r.params = refmodel::SamplingParams{0.0, 1.0};
  auto done = std::make_shared<bool>(false);
  auto timer = std::make_shared<asio::steady_timer>(io_);
  uint64_t id = r.id;
  loop_->Submit(std::move(r), [resp, done, timer](const RequestOutput& o) {
    if (*done || !o.finished) return;
    *done = true;
    timer->cancel();
    resp->Send(200, "text/plain", "");
  });
  timer->expires_after(
      std::chrono::microseconds(static_cast<int64_t>(options_.health_generate_timeout_s * 1e6)));
  timer->async_wait([this, resp, done, id, timer](boost::system::error_code ec) {
    if (ec || *done) return;
    *done = true;
    loop_->Cancel(id);
    resp->Send(503, "application/json", ErrorJson(503, "generation did not complete in time"));
  });
}

void RefEngineServer::Impl::Models(net::HttpResponder& resp) {
  nlohmann::json model = {{"id", options_.model_name},
                          {"object", "model"},
                          {"created", 0},
                          {"owned_by", "longhaul"},
                          {"root", options_.model_name},
                          {"max_model_len", options_.max_model_len}};
  resp.Send(200, "application/json",
            nlohmann::json{{"object", "list"}, {"data", nlohmann::json::array({model})}}.dump());
}

MetricsView RefEngineServer::Impl::View() const {
  static const EngineStats kEmpty;
  MetricsView v;
  v.stats = engine_ ? &engine_->stats() : &kEmpty;
  v.server = &metrics_;
  v.model_name = options_.model_name;
  v.num_running = engine_ ? engine_->num_running() : 0;
  v.num_waiting = engine_ ? engine_->num_waiting() : 0;
  v.num_speculative_tokens = options_.drafter_dir.empty() ? 0 : options_.num_speculative_tokens;
  v.style = options_.metrics_style;
  return v;
}

void RefEngineServer::Impl::Metrics(net::HttpResponder& resp) {
  if (loop_) metrics_.last_gen_throughput = loop_->RecentThroughput();
  resp.Send(200, "text/plain; version=0.0.4; charset=utf-8", RenderPrometheus(View()));
}

RefEngineServer::RefEngineServer(ServerOptions options, std::ostream& out)
    : impl_(std::make_unique<Impl>(std::move(options), out)) {}
RefEngineServer::~RefEngineServer() = default;
Status RefEngineServer::Start() { return impl_->Start(); }
Status RefEngineServer::Run() { return impl_->Run(); }
void RefEngineServer::Stop() { impl_->Stop(); }
int RefEngineServer::port() const { return impl_->port_; }
void RefEngineServer::set_crash_action(std::function<void()> fn) { impl_->crash_ = std::move(fn); }

}  // namespace longhaul::refengine
