// Measures lh-refengine's request capacity: C keep-alive connections, each sending the next
// request as soon as the previous answer is complete (closed loop), for S seconds, against a
// server started here with zero step cost. Prints requests/s, generated tokens/s and latency
// percentiles. This is the server's ceiling on this machine, not an open-loop benchmark.
//
//   refengine_bench [--connections 64] [--seconds 5] [--max-tokens 16] [--api completions|chat]
//                   [--stream] [-- extra lh-refengine args]
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "stages/refengine/asio.h"

extern char** environ;

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct Conn {
  tcp::socket socket;
  asio::streambuf buf;
  std::string request;
  Clock::time_point sent;
  explicit Conn(asio::io_context& io) : socket(io) {}
};

struct Stats {
  std::vector<double> latencies_ms;
  int64_t completion_tokens = 0;
  int64_t errors = 0;
};

int main(int argc, char** argv) {
  int connections = 64, seconds = 5, max_tokens = 16;
  std::string api = "completions";
  bool stream = false;
  std::vector<std::string> server_args;
  CLI::App app{"lh-refengine capacity benchmark (closed loop, zero step cost)"};
  app.add_option("--connections", connections);
  app.add_option("--seconds", seconds);
  app.add_option("--max-tokens", max_tokens);
  app.add_option("--api", api);
  app.add_flag("--stream", stream);
  app.add_option("server_args", server_args, "extra lh-refengine arguments (after --)");
  CLI11_PARSE(app, argc, argv);

  std::string bin =
      (std::filesystem::canonical("/proc/self/exe").parent_path() / "lh-refengine").string();
  std::string port_file = "/tmp/refengine_bench." + std::to_string(getpid()) + ".port";
  std::vector<std::string> args = {bin,       "--port",      "0",   "--port-file",
                                   port_file, "--log-level", "warn"};
  args.insert(args.end(), server_args.begin(), server_args.end());
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, bin.c_str(), nullptr, nullptr, cargs.data(), environ) != 0) {
    std::cerr << "cannot start " << bin << "\n";
    return 1;
  }
  int port = 0;
  for (int i = 0; i < 500 && port == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // waiting for a real process
    FILE* f = std::fopen(port_file.c_str(), "r");
    if (f) {
      if (std::fscanf(f, "%d", &port) != 1) port = 0;
      std::fclose(f);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // model load (~0.1 s)

  std::string body =
      api == "chat"
          ? "{\"messages\":[{\"role\":\"user\",\"content\":\"What is the capital of Lofoum?\"}],"
          : "{\"prompt\":\"The capital of Lofoum is\",";
  body += "\"max_tokens\":" + std::to_string(max_tokens) + ",\"ignore_eos\":true,\"temperature\":0";
  body += stream ? ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}" : "}";
  std::string path = api == "chat" ? "/v1/chat/completions" : "/v1/completions";
  std::string request = "POST " + path +
                        " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        "Content-Length: " +
                        std::to_string(body.size()) + "\r\n\r\n" + body;

  asio::io_context io;
  Stats stats;
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  std::vector<std::unique_ptr<Conn>> conns;
  std::function<void(Conn*)> send;
  // A response ends with the final chunk (streams and chunked bodies) or its Content-Length.
  std::function<void(Conn*)> read = [&](Conn* c) {
    asio::async_read_until(
        c->socket, c->buf, "\r\n\r\n", [&, c](boost::system::error_code ec, size_t n) {
          if (ec) {
            ++stats.errors;
            return;
          }
          std::string head(asio::buffers_begin(c->buf.data()),
                           asio::buffers_begin(c->buf.data()) + n);
          c->buf.consume(n);
          auto finish = [&, c](const std::string& payload) {
            stats.latencies_ms.push_back(
                std::chrono::duration<double, std::milli>(Clock::now() - c->sent).count());
            auto p = payload.rfind("\"completion_tokens\":");
            if (p != std::string::npos)
              stats.completion_tokens += std::atoi(payload.c_str() + p + 20);
            if (Clock::now() < deadline) send(c);
          };
          auto cl = head.find("Content-Length: ");
          if (cl != std::string::npos) {
            size_t len = std::stoul(head.substr(cl + 16));
            size_t have = c->buf.size();
            asio::async_read(c->socket, c->buf, asio::transfer_exactly(len > have ? len - have : 0),
                             [&, c, len, finish](boost::system::error_code ec2, size_t) {
                               if (ec2) {
                                 ++stats.errors;
                                 return;
                               }
                               std::string payload(asio::buffers_begin(c->buf.data()),
                                                   asio::buffers_begin(c->buf.data()) + len);
                               c->buf.consume(len);
                               finish(payload);
                             });
          } else {
            asio::async_read_until(c->socket, c->buf, "\r\n0\r\n\r\n",
                                   [&, c, finish](boost::system::error_code ec2, size_t m) {
                                     if (ec2) {
                                       ++stats.errors;
                                       return;
                                     }
                                     std::string payload(asio::buffers_begin(c->buf.data()),
                                                         asio::buffers_begin(c->buf.data()) + m);
                                     c->buf.consume(m);
                                     finish(payload);
                                   });
          }
        });
  };
  send = [&](Conn* c) {
    c->sent = Clock::now();
    asio::async_write(c->socket, asio::buffer(request),
                      [&, c](boost::system::error_code ec, size_t) {
                        if (ec) {
                          ++stats.errors;
                          return;
                        }
                        read(c);
                      });
  };
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  auto start = Clock::now();
  for (int i = 0; i < connections; ++i) {
    conns.push_back(std::make_unique<Conn>(io));
    conns.back()->socket.connect(ep);
    conns.back()->socket.set_option(tcp::no_delay(true));
    send(conns.back().get());
  }
  io.run();
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  std::remove(port_file.c_str());

  auto& l = stats.latencies_ms;
  std::sort(l.begin(), l.end());
  auto pct = [&](double q) {
    return l.empty() ? 0.0 : l[std::min(l.size() - 1, size_t(q * l.size()))];
  };
  std::printf("refengine_bench: api=%s stream=%d connections=%d max_tokens=%d seconds=%.2f\n",
              api.c_str(), stream, connections, max_tokens, elapsed);
  std::printf("  requests %zu (%.0f req/s), generated tokens %lld (%.0f tok/s), errors %lld\n",
              l.size(), l.size() / elapsed, static_cast<long long>(stats.completion_tokens),
              stats.completion_tokens / elapsed, static_cast<long long>(stats.errors));
  std::printf("  latency ms: p50 %.3f  p90 %.3f  p99 %.3f\n", pct(0.5), pct(0.9), pct(0.99));
  return stats.errors > 0 ? 1 : 0;
}
