// Drives an Engine on an io_context: runs a step whenever there is work, then delivers that
// step's outputs after the step's simulated cost has passed on an asio timer (never a blocking
// sleep), then runs the next step. One step is in flight at a time; requests that arrive during
// a step join the next one (continuous batching).
//
// With `hang` set, requests are accepted and never stepped: the engine that answers health but
// never generates. Threading: all calls on the io_context's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>

#include "stages/refengine/engine.h"

namespace boost::asio {
class io_context;
}

namespace longhaul::refengine {

class EngineLoop {
 public:
  using Sink = std::function<void(const RequestOutput&)>;

  EngineLoop(boost::asio::io_context& io, Engine* engine, bool hang);
  ~EngineLoop();

  // `sink` gets every output of the request; the last one has finished = true.
  void Submit(EngineRequest request, Sink sink);
  void Cancel(uint64_t id);

  const Engine& engine() const { return *engine_; }
  // Generated tokens per second over the last few seconds of delivered steps.
  double RecentThroughput() const;

 private:
  void MaybeStep();
  void RunStep();
  void Deliver(StepOutcome outcome);

  boost::asio::io_context& io_;
  Engine* engine_;
  bool hang_;
  bool busy_ = false;
  std::unordered_map<uint64_t, Sink> sinks_;
  struct Delivered {
    std::chrono::steady_clock::time_point at;
    int tokens;
  };
  std::deque<Delivered> recent_;
  struct TimerHolder;
  std::unique_ptr<TimerHolder> timer_;
  std::shared_ptr<bool> alive_;
};

}  // namespace longhaul::refengine
