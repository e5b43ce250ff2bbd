#include "daemon/workflow/sweep_items.h"

#include <optional>

#include "core/strings.h"
#include "daemon/workflow/foreach.h"
#include "daemon/workflow/yaml_reader.h"
#include "daemon/workflow/yaml_tree.h"

namespace longhaul::workflow {

Result<Sweep> ReadSweep(std::string_view text, std::string_view stage) {
  ASSIGN_OR_RETURN(Workflow wf, ParseWorkflow(text, "workflow"));
  YamlTree tree(text);
  std::optional<MapEntry> stages = FindMapEntry(tree.root(), "stages");
  std::optional<MapEntry> entry =
      stages ? FindMapEntry(stages->value, stage) : std::optional<MapEntry>();
  if (!entry) {
    return absl::NotFoundError(StrCat("workflow '", wf.name, "' has no stage '", stage, "'"));
  }
  std::optional<MapEntry> foreach_entry = FindMapEntry(entry->value, "foreach");
  if (!foreach_entry) {
    return absl::InvalidArgumentError(
        StrCat("stage '", stage, "' is not a sweep: it has no foreach"));
  }
  Diagnostics diag{"workflow"};
  std::optional<Foreach> foreach = ReadForeach(*foreach_entry, StrCat("stage '", stage, "'"), diag);
  RETURN_IF_ERROR(diag.ToStatus());
  Sweep sweep;
  for (const ForeachItem& item : ExpandForeach(*foreach)) {
    SweepItem out{StrCat(stage, "-", item.suffix), {}};
    for (const std::string& key : foreach->keys) out.values.emplace_back(key, item.values.at(key));
    if (const StageSpec* spec = wf.FindStage(out.stage);
        spec != nullptr && sweep.early_stop == nullptr) {
      sweep.early_stop = spec->early_stop;
    }
    sweep.items.push_back(std::move(out));
  }
  return sweep;
}

}  // namespace longhaul::workflow
