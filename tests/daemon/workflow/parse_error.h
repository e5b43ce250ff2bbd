// What the workflow parser says of a file that must not parse (the test fails when it parses).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "daemon/workflow/workflow.h"

namespace longhaul::workflow {

inline std::string ParseError(const std::string& text) {
  Result<Workflow> wf = ParseWorkflow(text, "wf.yaml");
  EXPECT_FALSE(wf.ok()) << "parsed, but expected an error:\n" << text;
  return wf.ok() ? "" : ToStd(wf.status().message());
}

}  // namespace longhaul::workflow
