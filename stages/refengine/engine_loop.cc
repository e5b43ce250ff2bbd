#include "stages/refengine/engine_loop.h"

#include "stages/refengine/asio.h"

namespace longhaul::refengine {

namespace asio = boost::asio;

namespace {
constexpr auto kThroughputWindow = std::chrono::seconds(5);
}

struct EngineLoop::TimerHolder {
  explicit TimerHolder(asio::io_context& io) : timer(io) {}
  asio::steady_timer timer;
};

EngineLoop::EngineLoop(asio::io_context& io, Engine* engine, bool hang)
    : io_(io),
      engine_(engine),
      hang_(hang),
      timer_(std::make_unique<TimerHolder>(io)),
      alive_(std::make_shared<bool>(true)) {}

EngineLoop::~EngineLoop() { *alive_ = false; }

void EngineLoop::Submit(EngineRequest request, Sink sink) {
  sinks_[request.id] = std::move(sink);
  engine_->Add(std::move(request));
  MaybeStep();
}

void EngineLoop::Cancel(uint64_t id) {
  sinks_.erase(id);
  engine_->Cancel(id);
}

void EngineLoop::MaybeStep() {
  if (hang_ || busy_ || !engine_->HasWork()) return;
  busy_ = true;
  // Posted, so that a zero-cost engine still lets the io_context serve sockets between steps.
  asio::post(io_, [this, alive = alive_] {
    if (*alive) RunStep();
  });
}

void EngineLoop::RunStep() {
  StepOutcome outcome = engine_->Step();
  if (outcome.cost_ms <= 0) {
    Deliver(std::move(outcome));
    return;
  }
  timer_->timer.expires_after(
      std::chrono::microseconds(static_cast<int64_t>(outcome.cost_ms * 1000)));
  timer_->timer.async_wait(
      [this, alive = alive_, outcome = std::move(outcome)](boost::system::error_code ec) mutable {
        if (*alive && !ec) Deliver(std::move(outcome));
      });
}

void EngineLoop::Deliver(StepOutcome outcome) {
  auto now = std::chrono::steady_clock::now();
  recent_.push_back({now, outcome.generated});
  while (!recent_.empty() && now - recent_.front().at > kThroughputWindow) recent_.pop_front();
  for (RequestOutput& o : outcome.outputs) {
    auto it = sinks_.find(o.id);
    if (it == sinks_.end()) continue;  // cancelled while the step ran
    if (o.finished) {
      Sink sink = std::move(it->second);
      sinks_.erase(it);
      sink(o);
    } else {
      Sink sink = it->second;  // a sink may cancel its own request
      sink(o);
    }
  }
  busy_ = false;
  MaybeStep();
}

double EngineLoop::RecentThroughput() const {
  if (recent_.empty()) return 0;
  auto span = std::chrono::steady_clock::now() - recent_.front().at;
  double seconds = std::max(std::chrono::duration<double>(span).count(), 1.0);
  int64_t tokens = 0;
  for (const Delivered& d : recent_) tokens += d.tokens;
  return tokens / seconds;
}

}  // namespace longhaul::refengine
