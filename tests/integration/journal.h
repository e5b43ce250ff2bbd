// Helpers for writing test workflows whose stages leave a trace: every process appends
// "STAGE ATTEMPT" to a journal file before it becomes lh-testjob, so a test counts how many
// times each stage really ran, independently of what the coordinator recorded.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace longhaul::testing {

// `s` as a single-quoted YAML scalar ('' inside), safe in a flow sequence.
std::string YamlQuote(const std::string& s);
// [a, b, c] with every element quoted.
std::string YamlList(const std::vector<std::string>& items);

// One stage of a workflow's `stages:` map: "  NAME:", then "    needs: [...]" when any, each
// line of `extra` ("retry: {limit: 2}"), and "    run: RUN".
std::string StageYaml(const std::string& name, const std::string& run,
                      const std::vector<std::string>& needs = {},
                      const std::vector<std::string>& extra = {});

// A `run:` list that appends "$LONGHAUL_STAGE $LONGHAUL_ATTEMPT" to `journal`, then runs
// `/bin/sh -c SCRIPT` when `script` is given (in the same shell), else execs lh-testjob with
// `testjob_args`.
std::string JournaledRun(const std::string& journal, const std::vector<std::string>& testjob_args);
std::string JournaledScript(const std::string& journal, const std::string& script);

// The journal's lines, in order.
std::vector<std::string> JournalLines(const std::string& journal);
// How many processes each stage started (lines per stage name).
std::map<std::string, int> JournalCounts(const std::string& journal);

}  // namespace longhaul::testing
