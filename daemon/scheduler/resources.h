// Field-by-field arithmetic on v1::Resources (CPUs, memory, GPUs) for the scheduler's free
// counts: what an attempt holds, what a waiting GPU stage reserves, the roomiest agent.
#pragma once

#include <algorithm>

#include "longhaul/v1/types.pb.h"

namespace longhaul::scheduler {

inline void AddResources(v1::Resources* to, const v1::Resources& r) {
  to->set_cpus(to->cpus() + r.cpus());
  to->set_memory_bytes(to->memory_bytes() + r.memory_bytes());
  to->set_gpus(to->gpus() + r.gpus());
}

inline void SubtractResources(v1::Resources* from, const v1::Resources& r) {
  from->set_cpus(from->cpus() - r.cpus());
  from->set_memory_bytes(from->memory_bytes() - r.memory_bytes());
  from->set_gpus(from->gpus() - r.gpus());
}

// Each field the smaller of the two.
inline v1::Resources MinResources(const v1::Resources& a, const v1::Resources& b) {
  v1::Resources out;
  out.set_cpus(std::min(a.cpus(), b.cpus()));
  out.set_memory_bytes(std::min(a.memory_bytes(), b.memory_bytes()));
  out.set_gpus(std::min(a.gpus(), b.gpus()));
  return out;
}

// Raises each field of `to` to r's where r's is larger.
inline void MaxInto(v1::Resources* to, const v1::Resources& r) {
  to->set_cpus(std::max(to->cpus(), r.cpus()));
  to->set_memory_bytes(std::max(to->memory_bytes(), r.memory_bytes()));
  to->set_gpus(std::max(to->gpus(), r.gpus()));
}

}  // namespace longhaul::scheduler
