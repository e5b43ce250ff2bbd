// Internals of FakeOpenAiServer shared by its server half (fake_openai_server.cc) and its
// per-connection half (fake_openai_session.cc).
#pragma once

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "tests/stages/common/fake_openai_server.h"

namespace longhaul::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using nlohmann::json;

constexpr int kMaxPos = 16;  // draft positions counted

class FakeOpenAiServer::Impl {
 public:
  Impl(FakeOpenAiServer* owner, FakeOpenAiOptions options)
      : owner_(owner), options_(std::move(options)) {}

  FakeOpenAiServer* owner_;
  FakeOpenAiOptions options_;
  std::vector<std::unique_ptr<asio::io_context>> ios_;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors_;

  mutable std::mutex mu_;
  std::deque<int> statuses_;
  std::function<int(const json&)> fail_when_;
  std::vector<json> requests_;
  std::vector<std::shared_ptr<void>> hung_;  // sessions kept open without an answer

  std::atomic<bool> hang_{false};
  std::atomic<bool> healthy_{true};
  std::atomic<int64_t> generation_requests_{0};
  std::atomic<int64_t> completed_{0};
  std::atomic<int64_t> connections_{0};
  std::atomic<int64_t> waiting_first_chunk_{0}, max_waiting_first_chunk_{0};
  std::atomic<int64_t> drafts_{0}, draft_tokens_{0}, accepted_{0}, gen_tokens_{0},
      prompt_tokens_{0};
  std::atomic<int64_t> per_pos_[kMaxPos] = {};

  void Accept(size_t i);
  std::string Metrics() const;
};

// Serves requests on an accepted connection until the client closes it.
void ServeConnection(tcp::socket sock, FakeOpenAiServer::Impl* impl);

}  // namespace longhaul::testing
