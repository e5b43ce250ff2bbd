#include "agent/lib/inotify_watcher.h"

#include <unistd.h>

#include <cerrno>

#include "core/fs.h"

namespace longhaul::agent {

InotifyWatcher::InotifyWatcher(boost::asio::io_context& io, Callback cb)
    : sd_(io), cb_(std::move(cb)) {}

InotifyWatcher::~InotifyWatcher() {
  boost::system::error_code ec;
  sd_.close(ec);
}

Status InotifyWatcher::Init() {
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return ErrnoStatus("inotify_init1", "", errno);
  sd_.assign(fd);
  Arm();
  return OkStatus();
}

Result<int> InotifyWatcher::Add(const std::string& path, uint32_t mask, int64_t key) {
  int wd = ::inotify_add_watch(sd_.native_handle(), path.c_str(), mask);
  if (wd < 0) return ErrnoStatus("inotify_add_watch", path, errno);
  keys_[wd] = key;
  return wd;
}

void InotifyWatcher::Remove(int wd) {
  if (keys_.erase(wd) > 0) ::inotify_rm_watch(sd_.native_handle(), wd);
}

void InotifyWatcher::Arm() {
  sd_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                 [this](const boost::system::error_code& ec) {
                   if (ec) return;  // closed
                   Drain();
                   Arm();
                 });
}

void InotifyWatcher::Drain() {
  alignas(inotify_event) char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::read(sd_.native_handle(), buf, sizeof buf);
    if (n <= 0) return;  // EAGAIN: drained
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      if (ev->mask & IN_Q_OVERFLOW) {
        cb_(kOverflowKey, "");
        continue;
      }
      if (ev->mask & IN_IGNORED) {  // the watched file went away, or Remove() was called
        keys_.erase(ev->wd);
        continue;
      }
      auto it = keys_.find(ev->wd);
      if (it == keys_.end()) continue;
      cb_(it->second, ev->len > 0 ? std::string(ev->name) : std::string());
    }
  }
}

}  // namespace longhaul::agent
