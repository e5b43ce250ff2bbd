// Internal to the store: the column lists of the row tables and their decoding, shared by the
// writer's recovery reads and the client reads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "daemon/store/rows.h"
#include "daemon/store/sqlite.h"

namespace longhaul::store::internal {

std::string MapToJson(const std::map<std::string, std::string>& m);
std::map<std::string, std::string> JsonToMap(const std::string& json);
// A JSON array of strings; elements that are not strings are skipped, and text that is not an
// array reads as none.
std::string StringsToJson(const std::vector<std::string>& v);
std::vector<std::string> JsonToStrings(const std::string& json);
std::string ProgressToJson(const ProgressRow& p);
std::optional<ProgressRow> JsonToProgress(const std::string& json);
std::string ResourcesToJson(const v1::Resources& r);
v1::Resources JsonToResources(const std::string& json);

extern const char kRunColumns[];  // FROM runs r JOIN workflows w ON w.id = r.workflow_id
// kRunColumns with '' for the workflow's text, FROM runs r alone: for reads that show runs, which
// never need the text (a sweep's is megabytes, and a page of runs would read each one).
extern const char kShownRunColumns[];
constexpr int kRunColumnCount = 25;  // in either list
extern const char kStageColumns[];
// A run's kept totals (RunTotals), FROM runs r; read with ReadRunTotals.
extern const char kRunTotalsColumns[];
extern const char kAttemptColumns[];
extern const char kAgentColumns[];
// A cache hit for a key: the newest stage with the key that made its result itself, outside a
// run (?2). Its WHERE repeats the partial index stages_by_cache_hit's, which SQLite needs to
// use that index.
extern const char kCacheHitQuery[];

// Decode a row selected with the matching column list (starting at column 0).
RunRow ReadRun(const Stmt& st);
// kRunTotalsColumns from column `first`; nullopt where the run has none kept.
std::optional<RunTotals> ReadRunTotals(const Stmt& st, int first);
// {"running":3,"succeeded":5}, and back (text that is not such an object reads as none).
std::string CountsToJson(const std::map<std::string, int64_t>& counts);
std::map<std::string, int64_t> JsonToCounts(const std::string& json);
StageRow ReadStage(const Stmt& st);
AttemptRow ReadAttempt(const Stmt& st);
AgentRow ReadAgent(const Stmt& st);

// The artifacts of one stage, oldest first, read on `db`.
Result<std::vector<ArtifactRow>> ReadArtifactsOfStage(Db* db, int64_t stage_id);

}  // namespace longhaul::store::internal
