#include "tests/stages/common/fake_openai_server.h"

#include "core/strings.h"
#include "tests/stages/common/fake_openai_internal.h"

namespace longhaul::testing {

void FakeOpenAiServer::Impl::Accept(size_t i) {
  acceptors_[i]->async_accept([this, i](beast::error_code ec, tcp::socket sock) {
    if (ec) return;
    ++connections_;
    beast::error_code ignored;
    sock.set_option(tcp::no_delay(true), ignored);
    ServeConnection(std::move(sock), this);
    Accept(i);
  });
}

std::string FakeOpenAiServer::Impl::Metrics() const {
  std::string out;
  auto counter = [&](std::string_view name, int64_t v) {
    out += StrCat("# HELP ", name, " fake\n# TYPE ", name, " counter\n", name,
                  "_total{model_name=\"fake-model\"} ", v, ".0\n");
  };
  counter("vllm:spec_decode_num_drafts", drafts_);
  counter("vllm:spec_decode_num_draft_tokens", draft_tokens_);
  counter("vllm:spec_decode_num_accepted_tokens", accepted_);
  out += "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos counter\n";
  for (int p = 0; p < options_.num_spec_tokens && p < kMaxPos; ++p) {
    out += StrCat(
        "vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"fake-model\","
        "position=\"",
        p, "\"} ", static_cast<int64_t>(per_pos_[p]), ".0\n");
  }
  counter("vllm:generation_tokens", gen_tokens_);
  counter("vllm:prompt_tokens", prompt_tokens_);
  int per = std::max(1, options_.tokens_per_chunk);
  out += StrCat("# TYPE sglang:spec_accept_length gauge\nsglang:spec_accept_length ", per,
                ".0\n# TYPE sglang:spec_accept_rate gauge\nsglang:spec_accept_rate ",
                static_cast<double>(per - 1) / options_.num_spec_tokens, "\n",
                "# TYPE sglang:generation_tokens counter\nsglang:generation_tokens_total ",
                static_cast<int64_t>(gen_tokens_), ".0\n");
  return out;
}

FakeOpenAiServer::FakeOpenAiServer(FakeOpenAiOptions options)
    : impl_(std::make_shared<Impl>(this, std::move(options))) {}

FakeOpenAiServer::~FakeOpenAiServer() { Stop(); }

int FakeOpenAiServer::Start(int port, const std::string& host) {
  int n = std::max(1, impl_->options_.threads);
  for (int i = 0; i < n; ++i) {
    impl_->ios_.push_back(std::make_unique<asio::io_context>(1));
    auto acc = std::make_unique<tcp::acceptor>(*impl_->ios_.back());
    tcp::endpoint ep(asio::ip::make_address(host), static_cast<uint16_t>(port));
    acc->open(ep.protocol());
    acc->set_option(asio::socket_base::reuse_address(true));
    int one = 1;
    ::setsockopt(acc->native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    acc->bind(ep);
    acc->listen(asio::socket_base::max_listen_connections);
    port = acc->local_endpoint().port();
    impl_->acceptors_.push_back(std::move(acc));
  }
  port_ = port;
  for (int i = 0; i < n; ++i) {
    impl_->Accept(static_cast<size_t>(i));
    threads_.emplace_back([io = impl_->ios_[i].get()] { io->run(); });
  }
  return port_;
}

void FakeOpenAiServer::Stop() {
  for (auto& io : impl_->ios_) io->stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
  {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    impl_->hung_.clear();
  }
  impl_->acceptors_.clear();
  impl_->ios_.clear();  // destroys every session still waiting
}

void FakeOpenAiServer::SetHang(bool hang) { impl_->hang_ = hang; }
void FakeOpenAiServer::SetHealthy(bool healthy) { impl_->healthy_ = healthy; }
int64_t FakeOpenAiServer::generation_requests() const { return impl_->generation_requests_; }
int64_t FakeOpenAiServer::completed() const { return impl_->completed_; }
int64_t FakeOpenAiServer::max_waiting_first_chunk() const {
  return impl_->max_waiting_first_chunk_;
}
int64_t FakeOpenAiServer::connections() const { return impl_->connections_; }

std::string FakeOpenAiServer::url() const { return StrCat("http://127.0.0.1:", port_); }

void FakeOpenAiServer::PushStatuses(const std::vector<int>& statuses) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  for (int s : statuses) impl_->statuses_.push_back(s);
}

void FakeOpenAiServer::SetFailWhen(std::function<int(const json&)> fn) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->fail_when_ = std::move(fn);
}

std::vector<json> FakeOpenAiServer::requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->requests_;
}

}  // namespace longhaul::testing