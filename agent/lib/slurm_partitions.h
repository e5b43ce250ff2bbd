// What the Slurm agent knows of its cluster's partitions (docs/slurm.md, "Cancelling, signals,
// time limits"): each
// partition's MaxTime, read from one `scontrol -o show partition`, so that a stage's --time
// can be capped at its partition's limit instead of leaving the job PENDING
// (PartitionTimeLimit) for ever.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace longhaul::agent {

// The value of KEY in one line of `scontrol -o show ...` ("KEY=VALUE KEY=VALUE ..."); "" when
// the line has no KEY.
std::string ScontrolField(const std::string& line, const std::string& key);

// A Slurm time ("MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS") in whole
// minutes, rounded down; nullopt for UNLIMITED, INFINITE, NONE and anything that does not
// parse (no limit known).
std::optional<int64_t> ParseSlurmMinutes(const std::string& text);

struct SlurmPartitions {
  std::map<std::string, std::optional<int64_t>> max_minutes;  // by name; nullopt: unlimited
  std::string default_partition;                              // Default=YES; "" when none

  // The MaxTime in minutes of `partition` ("" = the default one); nullopt when unlimited or
  // not known.
  std::optional<int64_t> MaxMinutes(const std::string& partition) const;
};

// Parses `scontrol -o show partition` (one line per partition). Lines without a
// PartitionName are skipped.
SlurmPartitions ParsePartitions(const std::string& text);

}  // namespace longhaul::agent
