#include "stages/inspect/drafter_inspector.h"

#include <algorithm>
#include <set>

#include "core/strings.h"
#include "stages/inspect/drafter_files.h"
#include "stages/inspect/vocab_mapping.h"
#include "stages/refmodel/drafter.h"

namespace longhaul::inspect {
namespace {

using nlohmann::json;

const char kDrafterSection[] = "drafter";
const char kAuxKey[] = "eagle_aux_hidden_state_layer_ids";

std::string List(const std::vector<int64_t>& v) {
  std::vector<std::string> parts;
  for (int64_t x : v) parts.push_back(std::to_string(x));
  return StrCat("[", StrJoin(parts, ", "), "]");
}

std::optional<int64_t> ConfigIntKey(const json& j, std::initializer_list<const char*> keys,
                              std::string* which = nullptr) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it != j.end() && it->is_number_integer()) {
      if (which) *which = k;
      return it->get<int64_t>();
    }
  }
  return std::nullopt;
}

class DrafterChecks {
 public:
  DrafterChecks(const DrafterFiles& f, const TargetInfo& t, Report& r)
      : f_(f), t_(t), r_(r), cfg_(f.dir + "/config.json") {}

  void Run() {
    for (const std::string& p : f_.problems) Add(Severity::kError, "unreadable_file", p);
    Sizes();
    Mappings();
    AuxLayers();
    Target();
    if (f_.format == "refengine" && errors_ == 0) {
      auto d = refmodel::Drafter::Load(f_.dir);
      if (!d.ok()) {
        Add(Severity::kError, "refengine_load",
            StrCat("lh-refengine would refuse it: ", d.status().message()));
      }
    }
    Figures();
  }

  void Print(std::ostream& out) const {
    out << "drafter: " << f_.dir << " (" << f_.format << " layout)\n";
    auto opt = [](const std::optional<int64_t>& v) {
      return v ? std::to_string(*v) : std::string("-");
    };
    out << "  draft vocab         " << opt(draft_vocab_) << "  (d2t "
        << (f_.d2t ? std::to_string(f_.d2t->size()) : "missing") << ", t2d "
        << (f_.t2d ? StrCat(f_.t2d->size(), " with ", ones_, " set") : std::string("missing"))
        << ")\n";
    out << "  target vocab        drafter " << opt(drafter_target_vocab_) << ", target "
        << opt(t_.vocab_size) << "\n";
    out << "  target hidden size  drafter " << opt(drafter_target_hidden_) << ", target "
        << opt(t_.hidden_size) << "\n";
    out << "  aux layer ids       " << (aux_ ? List(*aux_) : std::string("-")) << " (" << aux_where_
        << ")\n";
    out << "  target model hash   drafter " << (hash_ ? hash_->substr(0, 16) : "-") << ", target "
        << (t_.model_hash ? t_.model_hash->substr(0, 16) : "-") << "\n";
    if (!t_.source.empty()) out << "  target facts from   " << t_.source << "\n";
  }

 private:
  void Add(Severity s, std::string check, std::string text) {
    errors_ += s == Severity::kError;
    r_.Add(s, kDrafterSection, std::move(check), std::move(text));
  }

  void Sizes() {
    draft_vocab_ = ConfigIntKey(f_.config, {"draft_vocab_size"});
    drafter_target_vocab_ = ConfigIntKey(f_.config, {"target_vocab_size", "vocab_size"}, &vocab_key_);
    if (f_.config.contains("target_hidden_size")) {
      drafter_target_hidden_ = ConfigIntKey(f_.config, {"target_hidden_size"}, &hidden_key_);
    } else if (f_.format != "refengine") {
      // EAGLE-3 drafters for Llama-style targets share the target's hidden size.
      drafter_target_hidden_ = ConfigIntKey(f_.config, {"hidden_size"}, &hidden_key_);
    }
    if (f_.config.contains("target_model_hash") && f_.config["target_model_hash"].is_string()) {
      hash_ = f_.config["target_model_hash"].get<std::string>();
    }
    if (!draft_vocab_) {
      if (f_.d2t) {
        Add(Severity::kWarn, "no_draft_vocab_size",
            StrCat(cfg_,
                   " has no integer draft_vocab_size; engines size the draft head from it "
                   "(d2t has ",
                   f_.d2t->size(), " entries)"));
      } else {
        Add(Severity::kError, "no_draft_vocab_size",
            StrCat(cfg_, " has no integer draft_vocab_size"));
      }
    } else if (*draft_vocab_ < 1) {
      Add(Severity::kError, "bad_draft_vocab_size",
          StrCat(cfg_, ": draft_vocab_size ", *draft_vocab_, " must be positive"));
    }
    if (!drafter_target_vocab_) {
      Add(Severity::kWarn, "no_target_vocab_size",
          StrCat(cfg_, " names no target vocabulary size (vocab_size or target_vocab_size)"));
    } else if (draft_vocab_ && *draft_vocab_ > *drafter_target_vocab_) {
      Add(Severity::kError, "draft_vocab_too_large",
          StrCat(cfg_, ": draft_vocab_size ", *draft_vocab_, " exceeds ", vocab_key_, " ",
                 *drafter_target_vocab_));
    }
    for (const auto& [name, shape] : f_.shapes) {
      if ((name == "lm_head.weight" || EndsWith(name, ".lm_head.weight")) && draft_vocab_ &&
          !shape.empty() && static_cast<int64_t>(shape[0]) != *draft_vocab_) {
        Add(Severity::kError, "lm_head_size",
            StrCat("tensor '", name, "' has ", shape[0], " rows but draft_vocab_size is ",
                   *draft_vocab_));
      }
    }
  }

  void Mappings() {
    VocabMappingInput in;
    in.d2t = f_.d2t ? &*f_.d2t : nullptr;
    in.t2d = f_.t2d ? &*f_.t2d : nullptr;
    in.d2t_file = f_.d2t_file;
    in.t2d_file = f_.t2d_file;
    in.dir = f_.dir;
    in.draft_vocab_size = draft_vocab_;
    in.target_vocab_size = drafter_target_vocab_;
    in.target_vocab_source = StrCat(cfg_, " says ", vocab_key_);
    in.target_vocab_bound = t_.vocab_size ? t_.vocab_size : drafter_target_vocab_;
    in.refengine_layout = f_.format == "refengine";
    VocabMappingFigures fig =
        CheckVocabMapping(in, [this](Severity s, std::string check, std::string text) {
          Add(s, std::move(check), std::move(text));
        });
    ones_ = fig.t2d_ones;
    d2t_out_of_range_ = fig.out_of_range;
    d2t_disagree_ = fig.disagreements;
  }

  std::optional<std::vector<int64_t>> ReadIds(const json& j, const std::string& where) {
    if (!j.is_array()) {
      Add(Severity::kError, "aux_layer_ids", StrCat(cfg_, ": ", where, " is not a list"));
      return std::nullopt;
    }
    std::vector<int64_t> ids;
    for (const json& v : j) {
      if (!v.is_number_integer()) {
        Add(Severity::kError, "aux_layer_ids",
            StrCat(cfg_, ": ", where, " holds a non-integer: ", v.dump()));
        return std::nullopt;
      }
      ids.push_back(v.get<int64_t>());
    }
    return ids;
  }

  void AuxLayers() {
    std::optional<std::vector<int64_t>> top, nested;
    if (f_.config.contains(kAuxKey)) top = ReadIds(f_.config[kAuxKey], kAuxKey);
    if (f_.config.contains("eagle_config") && f_.config["eagle_config"].is_object() &&
        f_.config["eagle_config"].contains(kAuxKey)) {
      nested = ReadIds(f_.config["eagle_config"][kAuxKey], StrCat("eagle_config.", kAuxKey));
    }
    if (top && nested) {
      aux_where_ = "top level and eagle_config";
      if (*top != *nested) {
        Add(Severity::kError, "aux_layer_ids_conflict",
            StrCat(cfg_, ": top-level ", kAuxKey, " ", List(*top), " and eagle_config's ",
                   List(*nested), " differ; engines read one or the other"));
      }
    } else if (nested) {
      aux_where_ = "eagle_config only";
      Add(Severity::kWarn, "aux_layer_ids_in_eagle_config",
          StrCat(cfg_, ": the aux layer ids ", List(*nested), " are only under eagle_config.",
                 kAuxKey, "; some vLLM versions read only the top-level ", kAuxKey,
                 " and silently use their default layers, which drops acceptance: copy the key "
                 "to the top level"));
    } else if (top) {
      aux_where_ = "top level";
    } else {
      aux_where_ = "missing";
      Add(Severity::kWarn, "no_aux_layer_ids",
          StrCat(cfg_, " has no ", kAuxKey,
                 " (neither at the top level nor under eagle_config): "
                 "the engine will pick its default layers; they must be the ones the "
                 "drafter was trained on"));
    }
    aux_ = top ? top : nested;
    if (!aux_) return;
    const auto& ids = *aux_;
    std::set<int64_t> distinct(ids.begin(), ids.end());
    if (distinct.size() != ids.size()) {
      Add(Severity::kError, "aux_layer_ids",
          StrCat(cfg_, ": aux layer ids ", List(ids), " repeat a layer"));
    }
    if (!ids.empty() && *distinct.begin() < 0) {
      Add(Severity::kError, "aux_layer_ids",
          StrCat(cfg_, ": aux layer ids ", List(ids), " include a negative id"));
    }
    if (ids.size() != 3) {
      Add(Severity::kWarn, "aux_layer_count",
          StrCat(cfg_, ": ", ids.size(), " aux layer ids ", List(ids),
                 "; EAGLE-3 fuses three (low, middle, high)"));
    }
    if (t_.num_layers && !ids.empty() && *distinct.rbegin() >= *t_.num_layers) {
      Add(Severity::kError, "aux_layer_out_of_range",
          StrCat("aux layer id ", *distinct.rbegin(), " is past the target's ", *t_.num_layers,
                 " layers (", t_.source, ")"));
    }
    if (t_.aux_layer_ids && *t_.aux_layer_ids != ids) {
      Add(Severity::kError, "aux_layer_mismatch",
          StrCat("the drafter reads aux layers ", List(ids), " but the target's states (",
                 t_.source, ") hold layers ", List(*t_.aux_layer_ids)));
    }
    std::optional<int64_t> H = t_.hidden_size ? t_.hidden_size : drafter_target_hidden_;
    for (const auto& [name, shape] : f_.shapes) {
      if ((name == "fc.weight" || EndsWith(name, ".fc.weight")) && H && *H > 0 &&
          shape.size() == 2 && shape[1] != ids.size() * static_cast<uint64_t>(*H)) {
        Add(Severity::kError, "fc_width",
            StrCat("tensor '", name, "' is [", shape[0], ", ", shape[1], "]: it fuses ",
                   static_cast<double>(shape[1]) / *H, " layers of ", *H, ", but ", List(ids),
                   " names ", ids.size()));
      }
    }
  }

  void Target() {
    if (t_.empty()) {
      Add(Severity::kInfo, "no_target",
          "no target given (--target-config, or --target-vocab-size / --target-hash): only the "
          "drafter's own consistency was checked");
      if (hash_) {
        Add(Severity::kInfo, "target_hash_unchecked",
            StrCat("the drafter records target_model_hash ", hash_->substr(0, 16), "..."));
      }
      return;
    }
    if (t_.vocab_size) {
      if (drafter_target_vocab_ && *drafter_target_vocab_ != *t_.vocab_size) {
        Add(Severity::kError, "target_vocab_mismatch",
            StrCat("the drafter was built for a target vocabulary of ", *drafter_target_vocab_,
                   " (", cfg_, " ", vocab_key_, "), the target has ", *t_.vocab_size, " (",
                   t_.source, ")"));
      } else if (!drafter_target_vocab_ && f_.t2d &&
                 static_cast<int64_t>(f_.t2d->size()) != *t_.vocab_size) {
        Add(Severity::kError, "target_vocab_mismatch",
            StrCat("t2d covers ", f_.t2d->size(), " target tokens, the target has ", *t_.vocab_size,
                   " (", t_.source, ")"));
      }
    }
    if (t_.hidden_size && drafter_target_hidden_ && *t_.hidden_size != *drafter_target_hidden_) {
      Add(Severity::kError, "target_hidden_mismatch",
          StrCat("the drafter expects target hidden states of ", *drafter_target_hidden_, " (",
                 cfg_, " ", hidden_key_, "), the target's are ", *t_.hidden_size, " (", t_.source,
                 ")"));
    }
    if (t_.model_hash) {
      if (!hash_) {
        Add(Severity::kWarn, "target_hash_unrecorded",
            StrCat(cfg_,
                   " records no target_model_hash: cannot tell whether it was trained for "
                   "this target"));
      } else if (*hash_ != *t_.model_hash) {
        Add(Severity::kError, "target_hash_mismatch",
            StrCat("the drafter was trained for target ", hash_->substr(0, 16),
                   "..., the target is ", t_.model_hash->substr(0, 16), "... (", t_.source, ")"));
      }
    }
  }

  void Figures() {
    json& s = r_.Section(kDrafterSection);
    auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
    s["dir"] = f_.dir;
    s["format"] = f_.format;
    s["draft_vocab_size"] = opt(draft_vocab_);
    s["target_vocab_size"] = opt(drafter_target_vocab_);
    s["target_hidden_size"] = opt(drafter_target_hidden_);
    s["target_model_hash"] = opt(hash_);
    s["d2t_entries"] = f_.d2t ? json(f_.d2t->size()) : json(nullptr);
    s["t2d_entries"] = f_.t2d ? json(f_.t2d->size()) : json(nullptr);
    s["t2d_ones"] = ones_;
    s["d2t_out_of_range"] = d2t_out_of_range_;
    s["d2t_t2d_disagreements"] = d2t_disagree_;
    s["aux_layer_ids"] = opt(aux_);
    s["aux_layer_ids_location"] = aux_where_;
    s["target"] = {{"source", t_.source},
                   {"vocab_size", opt(t_.vocab_size)},
                   {"hidden_size", opt(t_.hidden_size)},
                   {"num_layers", opt(t_.num_layers)},
                   {"model_hash", opt(t_.model_hash)}};
    if (draft_vocab_) r_.Metric("draft_vocab_size", static_cast<double>(*draft_vocab_));
    r_.Metric("d2t_out_of_range", static_cast<double>(d2t_out_of_range_));
    r_.Metric("d2t_t2d_disagreements", static_cast<double>(d2t_disagree_));
    r_.Metric("drafter_errors", errors_);
  }

  const DrafterFiles& f_;
  const TargetInfo& t_;
  Report& r_;
  std::string cfg_;
  std::optional<int64_t> draft_vocab_, drafter_target_vocab_, drafter_target_hidden_;
  std::string vocab_key_ = "vocab_size", hidden_key_ = "hidden_size";
  std::optional<std::string> hash_;
  std::optional<std::vector<int64_t>> aux_;
  std::string aux_where_ = "missing";
  int64_t ones_ = 0, d2t_out_of_range_ = 0, d2t_disagree_ = 0;
  int errors_ = 0;
};

}  // namespace

Status InspectDrafter(const DrafterOptions& o, Report& report, std::ostream& out) {
  if (o.drafter.empty()) return absl::InvalidArgumentError("--drafter is required");
  ASSIGN_OR_RETURN(DrafterFiles files, ReadDrafterFiles(o.drafter));
  TargetInfo target;
  if (!o.target_config.empty()) {
    ASSIGN_OR_RETURN(target, ReadTargetInfo(o.target_config));
  }
  if (o.target_vocab_size || o.target_hash) {
    if (o.target_vocab_size) target.vocab_size = *o.target_vocab_size;
    if (o.target_hash) target.model_hash = *o.target_hash;
    target.source = target.source.empty() ? "flags" : StrCat(target.source, " and flags");
  }
  DrafterChecks checks(files, target, report);
  checks.Run();
  checks.Print(out);
  return OkStatus();
}

}  // namespace longhaul::inspect
