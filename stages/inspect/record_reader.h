// Lenient reading of a JSONL file (or of one JSON array, as ShareGPT dumps come), for
// inspections that must report every bad line rather than stop at the first one.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"

namespace longhaul::inspect {

using RecordFn = std::function<void(const nlohmann::json& record, const std::string& where)>;
using BadLineFn = std::function<void(const std::string& where, const std::string& why)>;

// Calls `fn` for each record, with `where` = "FILE:LINE" (or "FILE: record N" in an array);
// a line that is not JSON goes to `bad` and reading goes on. Blank lines are skipped. Only a
// file that cannot be opened or read is an error (naming it).
Status ForEachJsonRecord(const std::string& path, const RecordFn& fn, const BadLineFn& bad);

}  // namespace longhaul::inspect
