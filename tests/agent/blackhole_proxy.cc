#include "tests/agent/blackhole_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace longhaul::testing {
namespace {

int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

struct Pair {
  int fd[2];  // client, upstream
  bool closed = false;
};

}  // namespace

BlackholeProxy::BlackholeProxy(int upstream_port) : upstream_port_(upstream_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
      ::listen(listen_fd_, 16) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::abort();
  }
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { Run(); });
}

BlackholeProxy::~BlackholeProxy() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

void BlackholeProxy::Run() {
  std::vector<Pair> pairs;
  char buf[65536];
  while (!stop_) {
    bool holed = blackholed_;
    std::vector<pollfd> fds;
    fds.push_back({listen_fd_, static_cast<short>(holed ? 0 : POLLIN), 0});
    for (const Pair& p : pairs) {
      for (int fd : p.fd)
        fds.push_back({fd, static_cast<short>(holed || p.closed ? 0 : POLLIN), 0});
    }
    // A short timeout so that a change of blackholed_ or stop_ is seen.
    ::poll(fds.data(), fds.size(), 20);
    if (holed) continue;
    if (fds[0].revents & POLLIN) {
      int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      int u = c >= 0 ? Connect(upstream_port_) : -1;
      if (u >= 0) {
        pairs.push_back({{c, u}});
      } else if (c >= 0) {
        ::close(c);
      }
    }
    for (size_t i = 0; i < pairs.size(); ++i) {
      Pair& p = pairs[i];
      for (int side = 0; side < 2 && !p.closed; ++side) {
        const pollfd& pf = fds[1 + 2 * i + side];
        if (!(pf.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = ::read(p.fd[side], buf, sizeof buf);
        if (n <= 0) {
          p.closed = true;
          break;
        }
        for (ssize_t off = 0; off < n;) {
          ssize_t w = ::write(p.fd[1 - side], buf + off, static_cast<size_t>(n - off));
          if (w <= 0) {
            p.closed = true;
            break;
          }
          off += w;
        }
      }
    }
    for (auto it = pairs.begin(); it != pairs.end();) {
      if (it->closed) {
        ::close(it->fd[0]);
        ::close(it->fd[1]);
        it = pairs.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (Pair& p : pairs) {
    ::close(p.fd[0]);
    ::close(p.fd[1]);
  }
}

}  // namespace longhaul::testing
