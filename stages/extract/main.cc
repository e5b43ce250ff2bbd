// lh-extract: the target's hidden states over generated conversations, for drafter training
// (ENGINES.md, "The EAGLE-3 pipeline"; docs/refengine.md; docs/stages.md for --backend command).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "core/event_writer.h"
#include "core/logging.h"
#include "core/strings.h"
#include "stages/command/command_flags.h"
#include "stages/extract/refengine_extract.h"

int main(int argc, char** argv) {
  longhaul::extract::RefengineExtractOptions o;
  longhaul::command::CommandFlags command("lh-extract");
  std::string backend, out;
  CLI::App app{
      "lh-extract: run the target model over conversation samples (JSONL from lh-datagen) and "
      "write its per-position states (input_ids, loss_mask, hidden_state, aux_hidden_state) as "
      "binary shards plus manifest.json. Re-running over the same --out skips finished shards. "
      "With --backend command, supervises an external extraction command given after '--' "
      "instead. Reports progress, metrics and outputs as stage events when $LONGHAUL_EVENTS is "
      "set."};
  app.add_option("--backend", backend,
                 "refengine (the reference target, in-process) or command (an external command)")
      ->required()
      ->check(CLI::IsMember({"refengine", "command"}));
  auto* data = app.add_option("--data", o.data, "conversations JSONL (refengine)");
  app.add_option("--out", out,
                 "output directory (command: where its outputs are checked; default .)");
  std::vector<CLI::Option*> refengine_only = {
      data,
      app.add_option("--shard-size", o.shard_size, "samples per shard")->capture_default_str(),
      app.add_option("--corpus", o.corpus,
                     "the target's corpus, as given to lh-refengine (default: the repo's)"),
      app.add_option("--max-samples", o.max_samples, "use only the first N samples")};
  command.Add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit with 2, as the longhaul CLI does; --help with 0.
    return app.exit(e) == 0 ? 0 : 2;
  }
  longhaul::SetupLogging("info");
  longhaul::EventWriter events = longhaul::EventWriter::FromEnv();
  const char* r = std::getenv("LONGHAUL_RESUME");
  bool resume = r != nullptr && std::strcmp(r, "1") == 0;

  if (backend == "command") {
    if (auto given = longhaul::command::GivenOptions(refengine_only); !given.empty()) {
      std::cerr << "lh-extract: " << longhaul::StrJoin(given, ", ")
                << " apply only to --backend refengine (pass them to the command instead)\n";
      return 2;
    }
    return longhaul::command::RunCommandStage(command, out, resume, events);
  }
  if (auto given = command.Given(); !given.empty()) {
    std::cerr << "lh-extract: " << longhaul::StrJoin(given, ", ")
              << " apply only to --backend command\n";
    return 2;
  }
  if (o.data.empty() || out.empty()) {
    std::cerr << "lh-extract: --backend refengine needs --data and --out\n";
    return 2;
  }
  o.out = out;
  longhaul::Status s = longhaul::extract::RunRefengineExtract(o, events, std::cout);
  if (!s.ok()) {
    std::cerr << "lh-extract: " << s.message() << "\n";
    events.Message("error", std::string(s.message()));
    return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
