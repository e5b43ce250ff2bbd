// The cluster an agent serves: the cluster id of the coordinator's store it works for, kept in
// STATE/cluster_id (with the store's incarnation on a second line), so that an agent never
// reports its attempts to, or takes work from, the coordinator of another store
// (docs/agent.md, "The cluster it serves").
#pragma once

#include <string>

#include "core/status.h"
#include "longhaul/v1/agent.pb.h"

namespace longhaul::agent {

class ClusterMembership {
 public:
  explicit ClusterMembership(std::string state_dir);

  // Reads STATE/cluster_id; none yet is fine (the first Welcome is adopted). InvalidArgument
  // for a file that is not a cluster id.
  Status Load();

  // "" until the agent has served a coordinator that names its cluster.
  const std::string& cluster_id() const { return cluster_id_; }

  // Checks the coordinator's Welcome. OK when it names this agent's cluster, names none (a
  // coordinator older than cluster ids), or this agent has none yet or the coordinator takes
  // agents over (--new-cluster): then its id is adopted and written (fsynced) before OK.
  // Aborted, naming both ids, when it is another cluster's coordinator.
  Status Check(const v1::Welcome& welcome, const std::string& coordinator);

 private:
  Status Save(const std::string& cluster_id, const std::string& incarnation);

  std::string path_;
  std::string cluster_id_;
  std::string incarnation_;
};

}  // namespace longhaul::agent
