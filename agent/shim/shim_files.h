// The shim's small file and /proc helpers: a prepared file for exit.json and the two lookups it
// needs from cancel.json. Plain POSIX; of longhaul code only inline headers of core/
// (atomic_file.h, json_string.h, utf8.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace longhaul::shim {

// Milliseconds since the epoch (CLOCK_REALTIME).
int64_t WallMs();

// Field 22 of /proc/PID/stat (start time in clock ticks since boot), or -1.
int64_t ProcStartTime(pid_t pid);

// An unnamed file (O_TMPFILE) in a directory, made ahead of time so that publishing it later
// allocates no inode and, on a full disk, no block: the constructor reserves `reserve` bytes
// for it (fallocate; where the file system cannot, by writing that many spaces), and Publish
// overwrites the start of the reservation in place (pwrite), cuts the file to `data`'s length
// (ftruncate) and links it in as `path`, all or nothing. Where O_TMPFILE is not supported, or
// `path` exists already, Publish returns false and the caller writes the file the ordinary
// way. `data` longer than the reservation is written the ordinary way into the unnamed file.
class PreparedFile {
 public:
  PreparedFile(const std::string& dir, int64_t reserve);
  ~PreparedFile();
  PreparedFile(const PreparedFile&) = delete;
  PreparedFile& operator=(const PreparedFile&) = delete;

  // True when the bytes are reserved; false (with reserve_error() an errno value) when the
  // disk was full already, or there is no unnamed file.
  bool reserved() const { return reserved_ > 0; }
  int reserve_error() const { return reserve_error_; }
  bool Publish(const std::string& path, const std::string& data);

 private:
  int fd_;
  int64_t reserved_ = 0;
  int reserve_error_ = 0;
};

// Reads a whole small file; false if it cannot.
bool ReadSmallFile(const std::string& path, std::string* out);

// Finds "key": <string> / "key": <integer> in a flat JSON object written by the agent.
// Enough for cancel.json; not a general JSON parser.
bool JsonFindString(const std::string& json, const std::string& key, std::string* out);
bool JsonFindInt(const std::string& json, const std::string& key, int64_t* out);

}  // namespace longhaul::shim
