#include "agent/lib/cluster_membership.h"

#include "core/fs.h"
#include "core/logging.h"
#include "core/strings.h"

namespace longhaul::agent {

ClusterMembership::ClusterMembership(std::string state_dir)
    : path_(std::move(state_dir) + "/cluster_id") {}

Status ClusterMembership::Load() {
  Result<std::string> text = ReadFile(path_);
  if (absl::IsNotFound(text.status())) return OkStatus();
  if (!text.ok()) return text.status();
  std::vector<std::string> lines = StrSplit(*text, '\n');
  std::string id(lines.empty() ? "" : StripWhitespace(lines[0]));
  if (id.empty() || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return absl::InvalidArgumentError(
        StrCat(path_,
               " does not hold a cluster id (32 hex digits); remove it only if this "
               "agent's attempts may go to any coordinator"));
  }
  cluster_id_ = id;
  if (lines.size() > 1) incarnation_ = std::string(StripWhitespace(lines[1]));
  return OkStatus();
}

Status ClusterMembership::Check(const v1::Welcome& welcome, const std::string& coordinator) {
  auto log = GetLogger("agent");
  const std::string& theirs = welcome.cluster_id();
  if (theirs.empty()) return OkStatus();  // an older coordinator: nothing to compare
  if (!cluster_id_.empty() && theirs != cluster_id_ && !welcome.new_cluster()) {
    return absl::AbortedError(
        StrCat("the coordinator ", coordinator, " is cluster ", theirs,
               " but this agent serves cluster ", cluster_id_, " (", path_,
               "): its attempts belong to that cluster's store. Point the agent at that "
               "store's coordinator, restore the store, or start longhauld with --new-cluster"));
  }
  if (theirs == cluster_id_ && welcome.incarnation() == incarnation_) return OkStatus();
  if (cluster_id_.empty()) {
    log->info("serving cluster {} (the coordinator {}); written to {}", theirs, coordinator, path_);
  } else if (theirs != cluster_id_) {
    log->warn(
        "the coordinator {} takes this agent over (--new-cluster): cluster {} replaces {}; "
        "attempts of the old cluster are stopped",
        coordinator, theirs, cluster_id_);
  } else if (!incarnation_.empty()) {
    log->warn("the coordinator's store is a restored copy of cluster {} (incarnation {}, was {})",
              theirs, welcome.incarnation(), incarnation_);
  }
  RETURN_IF_ERROR(Save(theirs, welcome.incarnation()));
  return OkStatus();
}

Status ClusterMembership::Save(const std::string& cluster_id, const std::string& incarnation) {
  RETURN_IF_ERROR(WriteFileAtomic(path_, StrCat(cluster_id, "\n", incarnation, "\n")));
  cluster_id_ = cluster_id;
  incarnation_ = incarnation;
  return OkStatus();
}

}  // namespace longhaul::agent
