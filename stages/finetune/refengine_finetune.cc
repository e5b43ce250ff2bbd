#include "stages/finetune/refengine_finetune.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/fs.h"
#include "core/strings.h"
#include "stages/refmodel/draft_vocab.h"
#include "stages/refmodel/drafter.h"
#include "stages/refmodel/drafter_trainer.h"
#include "stages/refmodel/state_shard.h"

namespace longhaul::finetune {
namespace {

// Set by SIGUSR1 (longhaul's notice before a stop); the next epoch's checkpoint answers it.
volatile sig_atomic_t finetune_noticed = 0;

void OnFinetuneNotice(int) { finetune_noticed = 1; }

namespace fs = std::filesystem;
using json = nlohmann::json;
using refmodel::Drafter;
using refmodel::StateManifest;
using refmodel::StateSequence;

// What must not change between a checkpoint and the run that resumes from it.
json Identity(const RefengineFinetuneOptions& o, const StateManifest& m) {
  return {{"target_model_hash", m.target_model_hash},
          {"data_sha256", m.data_sha256},
          {"num_samples", m.num_samples()},
          {"learning_rate", o.learning_rate},
          {"draft_vocab_size", o.draft_vocab_size},
          {"hidden_size", o.hidden_size},
          {"batch_size", o.batch_size},
          {"ttt_steps", o.ttt_steps},
          {"seed", o.seed}};
}

// The newest complete checkpoint epoch (0 when none); stale .tmp directories are removed.
int NewestCheckpoint(const std::string& ckpt_dir) {
  int newest = 0;
  std::error_code ec;
  if (!fs::is_directory(ckpt_dir, ec)) return 0;
  static const std::regex kName(R"(epoch-(\d+))");
  for (const auto& entry : fs::directory_iterator(ckpt_dir, ec)) {
    std::string name = entry.path().filename().string();
    if (EndsWith(name, ".tmp")) {
      fs::remove_all(entry.path(), ec);
      continue;
    }
    std::smatch m;
    if (!std::regex_match(name, m, kName)) continue;
    // A name out of range (epoch-99999999999) is not one of ours: not a checkpoint.
    std::optional<int64_t> epoch = ParseInt64(m[1].str());
    if (epoch && *epoch <= std::numeric_limits<int>::max() &&
        PathExists(entry.path().string() + "/trainer_state.json")) {
      newest = std::max(newest, static_cast<int>(*epoch));
    }
  }
  return newest;
}

// Writes `dir` as a whole: into dir.tmp, then renamed over it.
Status WriteDirAtomic(const std::string& dir,
                      const std::function<Status(const std::string&)>& fill) {
  std::string tmp = dir + ".tmp";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  RETURN_IF_ERROR(fill(tmp));
  fs::remove_all(dir, ec);
  fs::rename(tmp, dir, ec);
  if (ec) return absl::InternalError(StrCat("rename ", tmp, " to ", dir, ": ", ec.message()));
  return OkStatus();
}

int64_t DirBytes(const std::string& dir) {
  int64_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) n += static_cast<int64_t>(e.file_size(ec));
  }
  return n;
}

Status CheckOptions(const RefengineFinetuneOptions& o) {
  if (o.epochs < 0) return absl::InvalidArgumentError("--epochs must be >= 0");
  if (o.learning_rate <= 0) return absl::InvalidArgumentError("--lr must be > 0");
  if (o.hidden_size < 1) return absl::InvalidArgumentError("--hidden-size must be >= 1");
  if (o.batch_size < 1) return absl::InvalidArgumentError("--batch-size must be >= 1");
  if (o.ttt_steps < 1 || o.ttt_steps > 8) {
    return absl::InvalidArgumentError("--ttt-steps must be in [1, 8]");
  }
  if (o.log_every < 1) return absl::InvalidArgumentError("--log-every must be >= 1");
  return OkStatus();
}

}  // namespace

Status RunRefengineFinetune(const RefengineFinetuneOptions& o, EventWriter& events,
                            std::ostream& log) {
  RETURN_IF_ERROR(CheckOptions(o));
  auto read = refmodel::ReadStateManifest(o.data);
  if (!read.ok()) return Annotate(read.status(), "--data (an lh-extract output directory)");
  StateManifest manifest = std::move(*read);
  ASSIGN_OR_RETURN(std::vector<StateSequence> data, refmodel::LoadStates(o.data, manifest));
  if (data.empty()) return absl::InvalidArgumentError(StrCat(o.data, ": no samples"));
  RETURN_IF_ERROR(MakeDirs(o.out + "/ckpt"));
  const std::string ckpt_dir = o.out + "/ckpt";
  const json identity = Identity(o, manifest);

  // Token counts of the assistant tokens: the draft vocabulary and its coverage.
  std::vector<int64_t> counts(manifest.target_vocab_size, 0);
  int64_t assistant_tokens = 0;
  for (const StateSequence& s : data) {
    for (size_t t = 0; t < s.input_ids.size(); ++t) {
      if (!s.loss_mask[t]) continue;
      if (s.input_ids[t] < 0 || s.input_ids[t] >= manifest.target_vocab_size) {
        return absl::DataLossError(StrCat(o.data, ": sample '", s.id, "' has token id ",
                                          s.input_ids[t], " outside the target vocab"));
      }
      ++counts[s.input_ids[t]];
      ++assistant_tokens;
    }
  }

  std::optional<Drafter> drafter;
  int start_epoch = 1;
  json loss_history = json::array();
  int newest = o.resume ? NewestCheckpoint(ckpt_dir) : 0;
  std::string resume_from;
  if (newest > 0) {
    resume_from = StrCat(ckpt_dir, "/epoch-", newest);
    ASSIGN_OR_RETURN(std::string state_text, ReadFile(resume_from + "/trainer_state.json"));
    json state;
    try {
      state = json::parse(state_text);
    } catch (const json::exception& e) {
      return absl::DataLossError(StrCat(resume_from, "/trainer_state.json: not JSON: ", e.what()));
    }
    json was = state.value("identity", json::object());
    std::vector<std::string> changed;
    for (const auto& [key, now] : identity.items()) {
      if (!was.contains(key) || was[key] != now) {
        changed.push_back(StrCat(key, " ", was.value(key, json()).dump(), " -> ", now.dump()));
      }
    }
    if (!changed.empty()) {
      return absl::FailedPreconditionError(
          StrCat(resume_from, " was trained with other data or options (", StrJoin(changed, ", "),
                 "); resume with the same ones or use a new --out"));
    }
    ASSIGN_OR_RETURN(Drafter d, Drafter::Load(resume_from));
    drafter = std::move(d);
    loss_history = state.value("loss_history", json::array());
    start_epoch = newest + 1;
    log << "resuming from " << resume_from << "\n";
    events.Message("info", StrCat("resuming from ", resume_from));
  } else {
    ASSIGN_OR_RETURN(refmodel::DraftVocab vocab,
                     refmodel::BuildDraftVocab(counts, o.draft_vocab_size));
    refmodel::DrafterConfig config;
    config.target_vocab_size = manifest.target_vocab_size;
    config.target_hidden_size = manifest.hidden_size;
    config.hidden_size = o.hidden_size;
    config.aux_layer_ids = manifest.aux_layer_ids;
    config.target_model_hash = manifest.target_model_hash;
    ASSIGN_OR_RETURN(Drafter d, Drafter::Create(config, std::move(vocab), o.seed));
    drafter = std::move(d);
  }
  int64_t covered = 0;
  for (int32_t t : drafter->vocab().draft_to_target) covered += counts[t];

  refmodel::TrainerOptions topt;
  topt.ttt_steps = o.ttt_steps;
  topt.learning_rate = o.learning_rate;
  topt.batch_size = o.batch_size;
  topt.seed = o.seed;
  refmodel::DrafterTrainer trainer(&*drafter, &data, topt);
  if (!resume_from.empty()) {
    ASSIGN_OR_RETURN(refmodel::TensorMap opt,
                     refmodel::ReadTensorFile(resume_from + "/optimizer.bin"));
    RETURN_IF_ERROR(trainer.RestoreOptimizerState(opt, resume_from + "/optimizer.bin"));
  }
  log << "training on " << data.size() << " samples, " << trainer.num_positions()
      << " positions; draft vocab " << drafter->draft_vocab_size() << " covers "
      << (assistant_tokens ? 100.0 * covered / assistant_tokens : 0) << "% of assistant tokens\n";
  events.Progress(start_epoch - 1, o.epochs, "epochs");

  // A notice before a stop (preempt_notice): the reference trainer checkpoints at each epoch's
  // end, not mid-epoch, so the notice is answered by the next one; it must not end the process.
  ::signal(SIGUSR1, OnFinetuneNotice);
  for (int epoch = start_epoch; epoch <= o.epochs; ++epoch) {
    auto t0 = std::chrono::steady_clock::now();
    refmodel::EpochReport report = trainer.RunEpoch(epoch, [&](int64_t step, double loss) {
      if (step % o.log_every == 0) events.Metric("loss", loss, step);
    });
    refmodel::EvalReport eval = trainer.Evaluate();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    loss_history.push_back(report.mean_loss);
    events.Metric("epoch_loss", report.mean_loss, epoch);
    events.Metric("train_top1", eval.top1, epoch);
    events.Metric("epoch_seconds", seconds, epoch);
    log << "epoch " << epoch << "/" << o.epochs << ": loss " << report.mean_loss << ", top-1 "
        << eval.top1 << ", " << report.steps << " steps, " << seconds << " s\n";

    drafter->mutable_config().training = {{"epochs", epoch},
                                          {"global_step", trainer.global_step()},
                                          {"loss", report.mean_loss},
                                          {"train_top1", eval.top1},
                                          {"data", o.data}};
    std::string ckpt = StrCat(ckpt_dir, "/epoch-", epoch);
    RETURN_IF_ERROR(WriteDirAtomic(ckpt, [&](const std::string& dir) -> Status {
      RETURN_IF_ERROR(drafter->Save(dir));
      RETURN_IF_ERROR(refmodel::WriteTensorFile(dir + "/optimizer.bin", trainer.OptimizerState()));
      json state = {{"epoch", epoch},
                    {"global_step", trainer.global_step()},
                    {"epochs_planned", o.epochs},
                    {"loss_history", loss_history},
                    {"identity", identity}};
      return WriteFileAtomic(dir + "/trainer_state.json", state.dump(2) + "\n");
    }));
    if (finetune_noticed != 0) {
      finetune_noticed = 0;
      log << "checkpoint epoch-" << epoch << " answers the notice before a stop\n";
    }
    events.Checkpoint(ckpt, epoch);
    events.Progress(epoch, o.epochs, "epochs");
  }

  refmodel::EvalReport final_eval = trainer.Evaluate();
  if (o.epochs < start_epoch) {
    drafter->mutable_config().training = {{"epochs", start_epoch - 1}, {"data", o.data}};
  }
  const std::string export_dir = o.out + "/drafter";
  RETURN_IF_ERROR(
      WriteDirAtomic(export_dir, [&](const std::string& dir) { return drafter->Save(dir); }));
  if (!loss_history.empty()) events.Metric("final_loss", loss_history.back().get<double>());
  events.Metric("train_top1", final_eval.top1);
  events.Metric("train_eval_loss", final_eval.loss);
  events.Metric("draft_vocab_coverage", assistant_tokens ? double(covered) / assistant_tokens : 0);
  events.Metric("positions", static_cast<double>(trainer.num_positions()));
  events.Artifact("drafter", export_dir, DirBytes(export_dir));
  events.Output("drafter", fs::absolute(export_dir).lexically_normal().string());
  log << "exported " << export_dir << " (train top-1 agreement " << final_eval.top1 << ")\n";
  return OkStatus();
}

}  // namespace longhaul::finetune
