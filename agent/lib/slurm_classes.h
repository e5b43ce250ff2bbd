// The Slurm agent's map from longhaul's priority classes to Slurm's own queues
// (docs/slurm.md, "Priority classes"): --slurm-class-qos and --slurm-class-partition, each
// "CLASS=NAME[,CLASS=NAME...]" and repeatable.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace longhaul::agent {

// Parses the values of one of the flags into NAME by class. InvalidArgument naming the entry:
// not CLASS=NAME, a class other than high, normal or low, an empty NAME or one with a space,
// or a class given twice.
Result<std::map<std::string, std::string>> ParseSlurmClassMap(
    const std::vector<std::string>& values);

// FailedPrecondition when an extra sbatch argument (--slurm-arg) sets what a class map sets
// for every job: `option` is "--qos" (short "-q") or "--partition" (short "-p").
Status CheckSlurmClassArgs(const std::vector<std::string>& extra_args, std::string_view option,
                           std::string_view short_option);

}  // namespace longhaul::agent
