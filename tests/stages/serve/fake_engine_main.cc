// lh-fake-engine: a stand-in inference engine for lh-serve's tests (the fake OpenAI server
// of tests/stages/common behind the flags of a real engine's failure modes). lh-refengine
// offers the same faults for real; this one exists so lh-serve is tested on its own.
//
//   --host H --port P --model-name M
//   --load-delay-s S        not listening for S seconds (a slow load)
//   --hang                  healthy, never generates
//   --crash-after N         exits abruptly (code 3) on generation request N+1
//   --fatal-log-line TEXT   prints TEXT to stderr at start-up, then carries on
//   --exit-at-start CODE    exits at once with CODE (after a line on stderr)
//   --spawn-child           forks a child that sleeps in the same process group
//   --ignore-sigterm        ignores SIGTERM (and so does the child)
//   --ready-line TEXT       printed on stdout once listening
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "tests/stages/common/fake_openai_server.h"

int main(int argc, char** argv) {
  std::string host = "127.0.0.1", model = "fake-model", fatal_line, ready_line;
  int port = 0, crash_after = -1, exit_at_start = -1;
  double load_delay = 0;
  bool hang = false, spawn_child = false, ignore_term = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "lh-fake-engine: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--host")
      host = next();
    else if (a == "--port")
      port = std::atoi(next().c_str());
    else if (a == "--model-name")
      model = next();
    else if (a == "--load-delay-s")
      load_delay = std::atof(next().c_str());
    else if (a == "--hang")
      hang = true;
    else if (a == "--crash-after")
      crash_after = std::atoi(next().c_str());
    else if (a == "--fatal-log-line")
      fatal_line = next();
    else if (a == "--exit-at-start")
      exit_at_start = std::atoi(next().c_str());
    else if (a == "--spawn-child")
      spawn_child = true;
    else if (a == "--ignore-sigterm")
      ignore_term = true;
    else if (a == "--ready-line")
      ready_line = next();
    else if (a == "--drafter")
      next();
    else {
      std::fprintf(stderr, "lh-fake-engine: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  std::printf("fake engine starting: model %s\n", model.c_str());
  std::fflush(stdout);
  if (ignore_term) ::signal(SIGTERM, SIG_IGN);
  if (exit_at_start >= 0) {
    std::fprintf(stderr, "ValueError: cannot load model %s\n", model.c_str());
    return exit_at_start;
  }
  if (!fatal_line.empty()) {
    std::fprintf(stderr, "%s\n", fatal_line.c_str());
    std::fflush(stderr);
  }
  if (spawn_child) {
    pid_t child = ::fork();
    if (child == 0) {
      for (;;) ::pause();
    }
    std::printf("child pid %d\n", static_cast<int>(child));
    std::fflush(stdout);
  }
  if (load_delay > 0) {
    std::printf("loading weights for %.1f s\n", load_delay);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(load_delay));
  }
  longhaul::testing::FakeOpenAiServer server;
  std::atomic<int> generations{0};
  if (crash_after >= 0) {
    server.SetFailWhen([&](const nlohmann::json&) {
      if (++generations > crash_after) {
        std::fprintf(stderr, "Segmentation fault in worker\n");
        std::fflush(stderr);
        ::_exit(3);
      }
      return 0;
    });
  }
  server.SetHang(hang);
  // An address other than 127.0.0.1 is bound as given (another loopback address, in tests of
  // services reached from other agents).
  int bound = server.Start(port, host);
  std::printf("listening on %s:%d\n", host.c_str(), bound);
  if (!ready_line.empty()) std::printf("%s\n", ready_line.c_str());
  std::fflush(stdout);
  for (;;) ::pause();
}
