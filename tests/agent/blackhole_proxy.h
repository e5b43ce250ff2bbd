// A TCP proxy on 127.0.0.1 for network-fault tests. While "blackholed" it forwards nothing
// and accepts nothing, yet closes nothing: to both ends the network looks silent, as when
// packets are dropped, not refused. Thread-safe.
#pragma once

#include <atomic>
#include <string>
#include <thread>

namespace longhaul::testing {

class BlackholeProxy {
 public:
  explicit BlackholeProxy(int upstream_port);
  ~BlackholeProxy();

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  void set_blackholed(bool on) { blackholed_ = on; }

 private:
  void Run();

  int upstream_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> blackholed_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace longhaul::testing
