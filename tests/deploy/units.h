// What the deploy/ folder ships, read the way an operator installs it: the systemd units'
// [Service] keys and ExecStart command lines, and the example configs of deploy/config with
// some values changed (a temp state dir, port 0) — for tests that start the daemons as the
// units would.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace longhaul::testing {

// The unit file's (deploy/systemd/UNIT) "Key=value" lines of section [Service] (a key given
// twice keeps the last).
std::map<std::string, std::string> ServiceKeys(const std::string& unit);

// The unit's ExecStart split on spaces, with /usr/local/bin/ -> the build's bin dir and the
// config path (/etc/longhaul/...) -> `config`.
std::vector<std::string> ExecStart(const std::string& unit, const std::string& config);

// Writes deploy/config/EXAMPLE to `path` with the value of each key of `values` replaced
// ("key: value", the line's text after "key: " swapped whole). A key the example does not
// set (on an uncommented line) fails the current test, so that a renamed key is noticed.
void WriteExampleConfig(const std::string& example, const std::string& path,
                        const std::map<std::string, std::string>& values);

}  // namespace longhaul::testing
