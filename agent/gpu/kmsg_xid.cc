#include "agent/gpu/kmsg_xid.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/strings.h"

namespace longhaul::agent {
namespace {

// `s` as an unsigned hex number of 1..max_digits digits.
std::optional<uint32_t> KmsgHex(std::string_view s, size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  uint32_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}

// The record's text without the /dev/kmsg prefix ("6,1234,5678,-;"), its dictionary lines
// (" SUBSYSTEM=pci" after the first newline) and a trailing carriage return.
std::string_view KmsgMessage(std::string_view record) {
  record = record.substr(0, record.find('\n'));
  if (!record.empty() && record.back() == '\r') record.remove_suffix(1);
  size_t semi = record.find(';');
  if (semi != std::string_view::npos && !record.empty() && record[0] >= '0' && record[0] <= '9') {
    std::string_view prefix = record.substr(0, semi);
    if (prefix.find(',') != std::string_view::npos && prefix.find(' ') == std::string_view::npos) {
      record.remove_prefix(semi + 1);
    }
  }
  return record;
}

// Cuts the next ", "-separated field off `rest` when it starts with `key`; its value without
// quotes, or nullopt when `rest` does not start with `key`.
std::optional<std::string_view> KmsgField(std::string_view* rest, std::string_view key) {
  if (!StartsWith(*rest, key)) return std::nullopt;
  size_t comma = rest->find(',');
  std::string_view value = StripWhitespace(rest->substr(0, comma).substr(key.size()));
  *rest = comma == std::string_view::npos ? std::string_view()
                                          : StripWhitespace(rest->substr(comma + 1));
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
    value = value.substr(1, value.size() - 2);
  }
  return value;
}

}  // namespace

std::optional<std::string> NormalizePciBusId(std::string_view id) {
  id = StripWhitespace(id);
  std::vector<std::string> parts = StrSplit(id, ':');
  if (parts.size() != 2 && parts.size() != 3) return std::nullopt;
  std::optional<uint32_t> domain = parts.size() == 3 ? KmsgHex(parts[0], 8) : 0u;
  std::string_view bus_text = parts[parts.size() - 2];
  std::string_view devfn = parts.back();
  if (size_t dot = devfn.find('.'); dot != std::string_view::npos) {
    if (!KmsgHex(devfn.substr(dot + 1), 1)) return std::nullopt;  // the function: 0-7
    devfn = devfn.substr(0, dot);
  }
  std::optional<uint32_t> bus = KmsgHex(bus_text, 2), device = KmsgHex(devfn, 2);
  if (!domain || !bus || !device || *device > 0x1f) return std::nullopt;
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x", *domain, *bus, *device);
  return std::string(out);
}

std::optional<KmsgXid> ParseKmsgXid(std::string_view record) {
  std::string_view line = KmsgMessage(record);
  constexpr std::string_view kMark = "NVRM: Xid (PCI:";
  size_t at = line.find(kMark);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kMark.size());
  // The bus id ends at the closing parenthesis or at a MIG attribution (" GPU-I:01 GPU-CI:00").
  size_t close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view inside = rest.substr(0, close);
  std::optional<std::string> bus = NormalizePciBusId(inside.substr(0, inside.find(' ')));
  if (!bus) return std::nullopt;
  rest = rest.substr(close + 1);
  if (!StartsWith(rest, ":")) return std::nullopt;
  rest = StripWhitespace(rest.substr(1));
  size_t digits = 0;
  while (digits < rest.size() && digits < 6 && rest[digits] >= '0' && rest[digits] <= '9') {
    ++digits;
  }
  if (digits == 0 || (digits < rest.size() && rest[digits] != ',')) return std::nullopt;
  KmsgXid x;
  x.pci_bus_id = *bus;
  x.xid = static_cast<int>(*ParseInt64(rest.substr(0, digits)));
  rest = digits < rest.size() ? StripWhitespace(rest.substr(digits + 1)) : std::string_view();
  if (std::optional<std::string_view> pid = KmsgField(&rest, "pid=")) {
    x.pid = ParseInt64(*pid);
  }
  if (std::optional<std::string_view> name = KmsgField(&rest, "name=")) {
    if (*name != "<unknown>") x.process = std::string(*name);
  }
  x.text = std::string(rest);
  return x;
}

KmsgXidReader::KmsgXidReader(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    int err = errno;
    std::string why = std::strerror(err);
    if (err == EPERM || err == EACCES) {
      why += " (reading the kernel log needs root or CAP_SYSLOG when kernel.dmesg_restrict is 1)";
    }
    off_reason_ = StrCat(path_, ": ", why);
    return;
  }
  struct stat st {};
  device_ = ::fstat(fd_, &st) == 0 && S_ISCHR(st.st_mode);
  // From now on: /dev/kmsg takes SEEK_END to mean "after the last record".
  if (::lseek(fd_, 0, SEEK_END) < 0)
    TurnOff(StrCat(path_, ": seek to the end: ", std::strerror(errno)));
}

KmsgXidReader::~KmsgXidReader() {
  if (fd_ >= 0) ::close(fd_);
}

void KmsgXidReader::TurnOff(std::string reason) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  off_reason_ = std::move(reason);
}

std::vector<KmsgXid> KmsgXidReader::Poll() {
  std::vector<KmsgXid> out;
  if (fd_ < 0) return out;
  if (device_) {
    PollDevice(&out);
  } else {
    PollFile(&out);
  }
  return out;
}

void KmsgXidReader::PollDevice(std::vector<KmsgXid>* out) {
  char buf[8192];  // a record is at most 1 KiB of text plus its dictionary
  for (int guard = 0; guard < 100'000; ++guard) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n > 0) {
      if (auto x = ParseKmsgXid(std::string_view(buf, static_cast<size_t>(n)))) {
        out->push_back(std::move(*x));
      }
      continue;
    }
    if (n == 0 || errno == EAGAIN) return;
    if (errno == EINTR) continue;
    if (errno == EPIPE) {  // the ring buffer wrapped past us; the next read goes on
      ++lost_;
      continue;
    }
    TurnOff(StrCat(path_, ": read: ", std::strerror(errno)));
    return;
  }
}

void KmsgXidReader::PollFile(std::vector<KmsgXid>* out) {
  struct stat st {};
  off_t pos = ::lseek(fd_, 0, SEEK_CUR);
  if (::fstat(fd_, &st) == 0 && pos > st.st_size) {  // truncated: read it from the start
    ::lseek(fd_, 0, SEEK_SET);
    partial_.clear();
  }
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd_, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) partial_.append(buf, static_cast<size_t>(n));
  }
  if (n < 0 && errno != EAGAIN) {
    TurnOff(StrCat(path_, ": read: ", std::strerror(errno)));
    return;
  }
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(partial_.data() + start, nl - start);
    if (auto x = ParseKmsgXid(line)) out->push_back(std::move(*x));
  }
  partial_.erase(0, start);
  if (partial_.size() > 64 * 1024) partial_.clear();  // no newline in 64 KiB: not a log
}

}  // namespace longhaul::agent
