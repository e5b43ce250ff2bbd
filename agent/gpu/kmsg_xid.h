// XID events from the kernel log (docs/gpus.md, "XIDs from the kernel log"): the NVIDIA driver
// prints each XID it raises as one line,
//
//   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
//
// which the agent reads from /dev/kmsg where NVML's XID events are not available.
//
// The forms read: with `pid=` and `name=` (current drivers, `'<unknown>'` when the driver
// does not know the process), with `pid=` only or neither (older drivers), a bus id with or
// without the PCI function (`0000:3b:00`, `00000000:3B:00.0`), a MIG attribution after the bus
// id (`PCI:0000:3b:00 GPU-I:01 GPU-CI:00`), and the record as /dev/kmsg gives it
// (`6,1234,5678,-;NVRM: ...`) or as dmesg and journalctl print it (a timestamp or `kernel:`
// before `NVRM:`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::agent {

// A PCI bus id in the form the agent compares: `dddd:bb:dd` (domain, bus, device; lower-case
// hex, the domain cut to four digits, the function dropped), from any of the forms NVML,
// nvidia-smi and the driver print: "00000000:3B:00.0", "0000:3b:00", "3b:00.0". nullopt when
// `id` is none of them.
std::optional<std::string> NormalizePciBusId(std::string_view id);

// One XID line of the kernel log.
struct KmsgXid {
  std::string pci_bus_id;  // normalised (NormalizePciBusId)
  int xid = 0;
  std::optional<int64_t> pid;  // absent when the line has none or says '<unknown>'
  std::string process;         // empty when the line has none or says <unknown>
  std::string text;  // the driver's words after the fields, e.g. "GPU has fallen off the bus."
};

// Parses one kernel log record (one line; a trailing newline is ignored). nullopt when it is
// not an NVIDIA XID line, or is one whose bus id or XID does not parse.
std::optional<KmsgXid> ParseKmsgXid(std::string_view record);

// Follows the kernel log from the moment it is opened: /dev/kmsg (a character device, one
// record a read) or, for tests, a regular file whose appended lines are read. Never blocks.
class KmsgXidReader {
 public:
  // Opens `path` and seeks to its end: only what is written later is read. When it cannot be
  // opened (EPERM, EACCES without CAP_SYSLOG under kernel.dmesg_restrict; ENOENT) the reader
  // is off and off_reason() says why.
  explicit KmsgXidReader(std::string path);
  ~KmsgXidReader();
  KmsgXidReader(const KmsgXidReader&) = delete;
  KmsgXidReader& operator=(const KmsgXidReader&) = delete;

  bool on() const { return fd_ >= 0; }
  const std::string& off_reason() const { return off_reason_; }
  const std::string& path() const { return path_; }

  // The XID lines written since the last call, oldest first. Records the kernel overwrote
  // before they were read (EPIPE) are counted in lost(); a read error turns the reader off.
  std::vector<KmsgXid> Poll();
  uint64_t lost() const { return lost_; }

 private:
  void TurnOff(std::string reason);
  void PollDevice(std::vector<KmsgXid>* out);
  void PollFile(std::vector<KmsgXid>* out);

  std::string path_;
  int fd_ = -1;
  bool device_ = false;  // /dev/kmsg: one record a read; else lines of a file
  std::string partial_;  // a file's last line, not yet ended by a newline
  std::string off_reason_;
  uint64_t lost_ = 0;
};

}  // namespace longhaul::agent
