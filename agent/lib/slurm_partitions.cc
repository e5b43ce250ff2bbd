#include "agent/lib/slurm_partitions.h"

#include "core/strings.h"

namespace longhaul::agent {

std::string ScontrolField(const std::string& line, const std::string& key) {
  std::string needle = key + "=";
  size_t pos = 0;
  while ((pos = line.find(needle, pos)) != std::string::npos) {
    if (pos == 0 || line[pos - 1] == ' ') {
      size_t start = pos + needle.size();
      size_t end = line.find_first_of(" \n", start);
      return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
    pos += needle.size();
  }
  return "";
}

namespace {

// Digits only, not empty.
std::optional<int64_t> Number(const std::string& s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoll(s);
}

}  // namespace

std::optional<int64_t> ParseSlurmMinutes(const std::string& text) {
  int64_t days = 0;
  std::string rest = text;
  size_t dash = text.find('-');
  if (dash != std::string::npos) {
    auto d = Number(text.substr(0, dash));
    if (!d) return std::nullopt;
    days = *d;
    rest = text.substr(dash + 1);
  }
  auto parts = StrSplit(rest, ':');
  std::vector<int64_t> n;
  for (const auto& p : parts) {
    auto v = Number(p);
    if (!v) return std::nullopt;  // UNLIMITED, INFINITE, NONE, garbage
    n.push_back(*v);
  }
  if (n.empty() || n.size() > 3) return std::nullopt;
  int64_t minutes = 0;
  if (dash != std::string::npos) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    minutes = n[0] * 60 + (n.size() > 1 ? n[1] : 0);
  } else if (n.size() == 3) {
    minutes = n[0] * 60 + n[1];  // HH:MM:SS
  } else {
    minutes = n[0];  // MM, MM:SS
  }
  return days * 24 * 60 + minutes;
}

std::optional<int64_t> SlurmPartitions::MaxMinutes(const std::string& partition) const {
  auto it = max_minutes.find(partition.empty() ? default_partition : partition);
  if (it == max_minutes.end()) return std::nullopt;
  return it->second;
}

SlurmPartitions ParsePartitions(const std::string& text) {
  SlurmPartitions out;
  for (const auto& line : StrSplit(text, '\n')) {
    std::string name = ScontrolField(line, "PartitionName");
    if (name.empty()) continue;
    out.max_minutes[name] = ParseSlurmMinutes(ScontrolField(line, "MaxTime"));
    if (ScontrolField(line, "Default") == "YES") out.default_partition = name;
  }
  return out;
}

}  // namespace longhaul::agent
