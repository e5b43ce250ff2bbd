#include "agent/gpu/gpu_backend.h"

#include "agent/gpu/nvml_backend.h"
#include "agent/gpu/smi_backend.h"
#include "agent/lib/inventory.h"
#include "core/strings.h"

namespace longhaul::agent {

GpuBackendChoice ChooseGpuBackend(const std::string& nvml_library) {
  GpuBackendChoice choice;
  auto nvml = OpenNvml(nvml_library);
  if (nvml.ok()) {
    choice.backend = std::move(*nvml);
    return choice;
  }
  choice.notes.push_back(StrCat(ToStd(nvml.status().message()), "; trying nvidia-smi"));
  std::string smi = FindOnPath("nvidia-smi");
  if (smi.empty()) {
    choice.notes.push_back("nvidia-smi is not on PATH; GPUs are what --gpus declares");
  } else {
    auto backend = OpenNvidiaSmi(smi);
    if (backend.ok()) {
      choice.backend = std::move(*backend);
      return choice;
    }
    choice.notes.push_back(
        StrCat(ToStd(backend.status().message()), "; GPUs are what --gpus declares"));
  }
  choice.backend = std::make_unique<DeclaredGpuBackend>();
  return choice;
}

}  // namespace longhaul::agent
