#include "stages/extract/refengine_extract.h"

#include <chrono>
#include <filesystem>

#include "core/fs.h"
#include "core/hash.h"
#include "core/strings.h"
#include "stages/refmodel/conversation.h"
#include "stages/refmodel/extraction.h"
#include "stages/refmodel/state_shard.h"
#include "stages/refmodel/target_model.h"

namespace longhaul::extract {
namespace {

using refmodel::ConversationSample;
using refmodel::ShardInfo;
using refmodel::StateManifest;
using refmodel::StateSequence;
using Clock = std::chrono::steady_clock;

std::string ShardName(int index) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "shard-%05d.bin", index);
  return buf;
}

// The manifest already in `out`, checked to describe this same extraction, or a fresh one.
Result<StateManifest> PlanManifest(const RefengineExtractOptions& o,
                                   const refmodel::TargetModel& target, const std::string& data_sha,
                                   int64_t total, std::ostream& log) {
  StateManifest fresh;
  fresh.target_model_hash = target.model_hash();
  fresh.target_vocab_size = target.vocab_size();
  fresh.hidden_size = target.hidden_size();
  fresh.data_path = std::filesystem::absolute(o.data).string();
  fresh.data_sha256 = data_sha;
  fresh.shard_size = o.shard_size;
  fresh.total_samples = total;
  for (int64_t first = 0, i = 0; first < total; first += o.shard_size, ++i) {
    ShardInfo s;
    s.index = static_cast<int>(i);
    s.path = ShardName(s.index);
    s.first_sample = first;
    s.samples = std::min(o.shard_size, total - first);
    fresh.shards.push_back(s);
  }
  if (!PathExists(o.out + "/manifest.json")) return fresh;

  ASSIGN_OR_RETURN(StateManifest old, refmodel::ReadStateManifest(o.out));
  auto differs = [&](std::string_view what, const std::string& was, const std::string& now) {
    return absl::FailedPreconditionError(
        StrCat(o.out, "/manifest.json: this directory holds an extraction with another ", what,
               " (", was, ", now ", now, "); use a new --out or remove the directory"));
  };
  if (old.data_sha256 != data_sha) return differs("data file", old.data_sha256, data_sha);
  if (old.target_model_hash != fresh.target_model_hash) {
    return differs("target model", old.target_model_hash, fresh.target_model_hash);
  }
  if (old.shard_size != o.shard_size || old.total_samples != total) {
    return differs("shard plan", StrCat(old.total_samples, " samples / ", old.shard_size),
                   StrCat(total, " samples / ", o.shard_size));
  }
  // Keep the shards that are complete and whole on disk; redo the rest.
  int kept = 0;
  for (size_t i = 0; i < fresh.shards.size() && i < old.shards.size(); ++i) {
    const ShardInfo& s = old.shards[i];
    std::error_code ec;
    auto size = std::filesystem::file_size(o.out + "/" + s.path, ec);
    if (s.complete && !ec && static_cast<int64_t>(size) == s.bytes &&
        s.path == fresh.shards[i].path) {
      fresh.shards[i] = s;
      ++kept;
    }
  }
  log << "resuming: " << kept << " of " << fresh.shards.size() << " shards already complete\n";
  return fresh;
}

}  // namespace

Status RunRefengineExtract(const RefengineExtractOptions& o, EventWriter& events,
                           std::ostream& log) {
  if (o.shard_size < 1) return absl::InvalidArgumentError("--shard-size must be >= 1");
  auto t0 = Clock::now();
  ASSIGN_OR_RETURN(std::string data_text, ReadFile(o.data));
  ASSIGN_OR_RETURN(std::vector<ConversationSample> samples, refmodel::ReadConversationFile(o.data));
  if (o.max_samples >= 0 && static_cast<int64_t>(samples.size()) > o.max_samples) {
    samples.resize(o.max_samples);
  }
  if (samples.empty()) return absl::InvalidArgumentError(StrCat(o.data, ": no samples"));
  std::string corpus = o.corpus.empty() ? refmodel::DefaultCorpusPath() : o.corpus;
  ASSIGN_OR_RETURN(auto target, refmodel::TargetModel::FromCorpusFile(corpus));
  RETURN_IF_ERROR(MakeDirs(o.out));

  const int64_t total = static_cast<int64_t>(samples.size());
  ASSIGN_OR_RETURN(StateManifest manifest,
                   PlanManifest(o, *target, Sha256Hex(data_text), total, log));
  RETURN_IF_ERROR(refmodel::WriteStateManifest(o.out, manifest));

  // Progress counts samples processed (extracted or skipped), shard by shard.
  auto planned = [&](const ShardInfo& s) { return std::min(o.shard_size, total - s.first_sample); };
  int64_t done = 0, skipped = 0;
  for (const ShardInfo& s : manifest.shards) done += s.complete ? planned(s) : 0;
  events.Progress(static_cast<double>(done), static_cast<double>(total), "samples");
  auto last_progress = Clock::now();
  for (ShardInfo& shard : manifest.shards) {
    if (shard.complete) continue;
    std::vector<StateSequence> seqs;
    for (int64_t i = shard.first_sample; i < shard.first_sample + shard.samples; ++i) {
      auto s = refmodel::ExtractStates(*target, samples[i]);
      if (!s.ok()) {
        // A sample without an assistant turn teaches nothing; anything else is bad input.
        if (s.status().code() != absl::StatusCode::kInvalidArgument) return s.status();
        ++skipped;
        if (skipped <= 5) {
          events.Message("warn", StrCat("skipped: ", ToStd(s.status().message())));
          log << "skipped: " << s.status().message() << "\n";
        }
        continue;
      }
      seqs.push_back(std::move(*s));
    }
    const std::string path = o.out + "/" + shard.path;
    RETURN_IF_ERROR(refmodel::WriteStateShard(path, target->hidden_size(), seqs));
    shard.samples = static_cast<int64_t>(seqs.size());
    shard.tokens = shard.loss_tokens = 0;
    for (const StateSequence& s : seqs) {
      shard.tokens += static_cast<int64_t>(s.input_ids.size());
      for (uint8_t m : s.loss_mask) shard.loss_tokens += m;
    }
    shard.bytes = static_cast<int64_t>(std::filesystem::file_size(path));
    shard.complete = true;
    RETURN_IF_ERROR(refmodel::WriteStateManifest(o.out, manifest));
    done += planned(shard);
    if (Clock::now() - last_progress > std::chrono::milliseconds(200)) {
      events.Progress(static_cast<double>(done), static_cast<double>(total), "samples");
      last_progress = Clock::now();
    }
  }
  manifest.complete = true;
  RETURN_IF_ERROR(refmodel::WriteStateManifest(o.out, manifest));

  events.Progress(static_cast<double>(total), static_cast<double>(total), "samples");
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  events.Metric("samples", static_cast<double>(manifest.num_samples()));
  events.Metric("skipped_samples", static_cast<double>(skipped));
  events.Metric("tokens", static_cast<double>(manifest.num_tokens()));
  events.Metric("loss_tokens", static_cast<double>(manifest.num_loss_tokens()));
  events.Metric("bytes", static_cast<double>(manifest.num_bytes()));
  events.Metric("shards", static_cast<double>(manifest.shards.size()));
  events.Metric("extract_seconds", seconds);
  std::string dir = std::filesystem::absolute(o.out).lexically_normal().string();
  // Absolute: dependents run in other directories.
  events.Output("hidden_states", std::filesystem::absolute(dir).lexically_normal().string());
  std::error_code ec;
  auto manifest_bytes = std::filesystem::file_size(o.out + "/manifest.json", ec);
  events.Artifact("hidden_states", o.out + "/manifest.json",
                  ec ? std::nullopt : std::optional<int64_t>(manifest_bytes));
  log << "extracted " << manifest.num_samples() << " samples (" << manifest.num_tokens()
      << " tokens, " << manifest.num_loss_tokens() << " assistant tokens) into "
      << manifest.shards.size() << " shards, " << manifest.num_bytes() << " bytes, in " << seconds
      << " s\n";
  return OkStatus();
}

}  // namespace longhaul::extract
