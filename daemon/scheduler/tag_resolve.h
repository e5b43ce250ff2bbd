// Tags (docs/workflow-format.md, "Tags"): a name for one stage's result that later workflows
// read as `${tags.NAME.outputs.OUT}` and `${tags.NAME.run}`. A submission resolves every such
// reference once, against the tags as they are then; the values are the run's from there on
// (stored with it, part of its stages' cache keys), so moving a tag later changes nothing of a
// run already submitted.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "daemon/store/sqlite_store.h"
#include "daemon/workflow/cache_key.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::scheduler {

struct TagResolution {
  workflow::TagBindings bindings;      // what the stages' templates and keys see
  std::vector<store::TagUseRow> uses;  // stored with the run, one a reference key
};

// Resolves wf.tag_uses against the store's tags (a reader: any thread). InvalidArgument, one
// line a problem in file order, each "PATH:LINE:COL: run[1] in stage 'bench':
// ${tags.best.outputs.drafter}: no tag 'best' ...", for an unknown tag or an output the
// tagged stage did not record.
Result<TagResolution> ResolveTags(store::SqliteStore* store, const workflow::Workflow& wf);

// A tag as the client API answers it (previous left empty).
v1::Tag TagRowToProto(const store::TagRow& t);

// Checks a tag's name: what a template can refer to ([A-Za-z_][A-Za-z0-9_-]*, not "outputs").
Status CheckTagName(const std::string& name);

}  // namespace longhaul::scheduler
