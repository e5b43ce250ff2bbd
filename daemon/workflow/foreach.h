// Internal to longhaul_workflow: `foreach`, one stage declared over a list or a matrix
// (docs/workflow-format.md, "Sweeps: foreach").
//
//   foreach: [a, b]                       -> stages NAME-a, NAME-b; ${item} is the value
//   foreach: {tokens: [3, 5], engine: [vllm, sglang]}
//                                         -> NAME-3-vllm, NAME-3-sglang, NAME-5-vllm, ...;
//                                            ${item.tokens}, ${item.engine}
//
// Items come in file order, the first key outermost. An item's name is its values joined by
// "-", each with characters other than letters, digits, _ and - replaced by _, so that it is
// a stage name templates and logs accept.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/workflow/stage_parser.h"
#include "daemon/workflow/yaml_reader.h"

namespace longhaul::workflow {

struct Foreach {
  // The matrix's keys in file order; one "" key for a plain list.
  std::vector<std::string> keys;
  std::vector<std::vector<Scalar>> values;  // per key, non-empty
  SourcePos pos;

  size_t Count() const;  // items: the product of the lists' sizes (saturates at SIZE_MAX)
};

struct ForeachItem {
  std::string suffix;                         // "3-vllm"
  std::map<std::string, std::string> values;  // key -> value ("" -> value for a plain list)
};

// Reads a stage's `foreach`, reporting an empty list, a value that is not a scalar, a bad key.
std::optional<Foreach> ReadForeach(const MapEntry& e, std::string_view where, Diagnostics& diag);

// Every item, in order.
std::vector<ForeachItem> ExpandForeach(const Foreach& foreach);

// Substitutes ${item} and ${item.KEY} in the stage's run and env (a "$${" stays as written,
// for the template parser). A reference to a key the foreach does not have is reported once,
// at its column, and left as written. Returns false if anything was reported.
bool SubstituteItem(const Foreach& foreach, const ForeachItem& item, std::string_view stage,
                    ParsedStage& parsed, Diagnostics& diag);

// `needs` of every stage with each name of a foreach stage replaced by its items' names: all
// of them, or, when the needing stage is itself a foreach item over every key of the needed
// one, the items with the same values for those keys. `items[name]` lists a foreach stage's
// expansions as (index into `stages`, item).
void ExpandNeeds(const std::map<std::string, std::vector<std::pair<int, ForeachItem>>>& items,
                 const std::vector<const ForeachItem*>& item_of, std::vector<ParsedStage>& stages);

}  // namespace longhaul::workflow
