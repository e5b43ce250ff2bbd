// File-change notifications for the agent's event loop: one inotify descriptor watched by
// asio, so the agent learns of new event lines, pid.json and exit.json without polling.
//
// All methods run on the io_context's thread. The callback gets the watch's key and the name
// of the file (empty for a watch on a file itself); an inotify queue overflow calls it once
// with key kOverflowKey, meaning "anything may have changed".
#pragma once

#include <sys/inotify.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "core/status.h"

namespace longhaul::agent {

class InotifyWatcher {
 public:
  static constexpr int64_t kOverflowKey = -1;
  using Callback = std::function<void(int64_t key, const std::string& name)>;

  InotifyWatcher(boost::asio::io_context& io, Callback cb);
  ~InotifyWatcher();

  Status Init();
  // Watches `path` for `mask` (IN_MODIFY, IN_MOVED_TO, ...); returns the watch descriptor.
  Result<int> Add(const std::string& path, uint32_t mask, int64_t key);
  void Remove(int wd);

 private:
  void Arm();
  void Drain();

  boost::asio::posix::stream_descriptor sd_;
  Callback cb_;
  std::map<int, int64_t> keys_;  // wd -> key
};

}  // namespace longhaul::agent
