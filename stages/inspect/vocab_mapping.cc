#include "stages/inspect/vocab_mapping.h"

#include <unordered_map>

#include "core/strings.h"

namespace longhaul::inspect {

VocabMappingFigures CheckVocabMapping(const VocabMappingInput& in, const AddFinding& add) {
  VocabMappingFigures fig;
  const int64_t V =
      in.t2d ? static_cast<int64_t>(in.t2d->size()) : in.target_vocab_bound.value_or(-1);
  bool full_vocab =
      in.draft_vocab_size && in.target_vocab_size && *in.draft_vocab_size == *in.target_vocab_size;
  if (!in.d2t) {
    if (full_vocab) {
      add(Severity::kInfo, "no_d2t", "no d2t: the draft vocabulary is the whole target vocabulary");
    } else {
      add(Severity::kError, "no_d2t",
          StrCat("no d2t mapping in ", in.dir,
                 " (d2t.bin, or a 'd2t' tensor in *.safetensors): "
                 "draft ids cannot be mapped to target ids"));
    }
  }
  if (!in.t2d && !full_vocab) {
    add(in.refengine_layout ? Severity::kError : Severity::kWarn, "no_t2d",
        StrCat("no t2d mapping in ", in.dir, " (t2d.bin, or a 't2d' tensor in *.safetensors)"));
  }
  if (in.t2d) {
    int64_t bad = 0, first_bad = -1;
    for (size_t t = 0; t < in.t2d->size(); ++t) {
      int64_t v = (*in.t2d)[t];
      if (v == 1) {
        ++fig.t2d_ones;
      } else if (v != 0) {
        if (bad++ == 0) first_bad = static_cast<int64_t>(t);
      }
    }
    if (bad > 0) {
      add(Severity::kError, "t2d_values",
          StrCat(in.t2d_file, ": t2d must hold 0 or 1; ", bad, " entries do not (first: t2d[",
                 first_bad, "] = ", (*in.t2d)[first_bad], ")"));
    }
    if (in.target_vocab_size && static_cast<int64_t>(in.t2d->size()) != *in.target_vocab_size) {
      add(Severity::kError, "t2d_length",
          StrCat(in.t2d_file, ": t2d covers ", in.t2d->size(), " target tokens but ",
                 in.target_vocab_source, " ", *in.target_vocab_size));
    }
    if (in.draft_vocab_size && fig.t2d_ones != *in.draft_vocab_size) {
      add(Severity::kError, "t2d_count",
          StrCat(in.t2d_file, ": t2d marks ", fig.t2d_ones,
                 " target tokens but draft_vocab_size is ", *in.draft_vocab_size));
    }
  }
  if (!in.d2t) return fig;
  const auto& d2t = *in.d2t;
  if (in.draft_vocab_size && static_cast<int64_t>(d2t.size()) != *in.draft_vocab_size) {
    add(Severity::kError, "d2t_length",
        StrCat(in.d2t_file, ": d2t has ", d2t.size(), " entries but draft_vocab_size is ",
               *in.draft_vocab_size));
  }
  std::unordered_map<int64_t, int64_t> owner;  // target id -> first draft id mapping to it
  int64_t out_of_range = 0, dups = 0, disagree = 0, not_increasing = 0;
  std::string first_oor, first_dup, first_disagree, first_order;
  int64_t prev = -1;
  for (size_t d = 0; d < d2t.size(); ++d) {
    int64_t t = static_cast<int64_t>(d) + d2t[d];
    if (t < 0 || (V >= 0 && t >= V)) {
      if (out_of_range++ == 0) {
        first_oor = StrCat("d2t[", d, "] = ", d2t[d], " gives target id ", t);
      }
      continue;
    }
    auto [it, fresh] = owner.emplace(t, static_cast<int64_t>(d));
    if (!fresh && dups++ == 0) {
      first_dup = StrCat("draft ids ", it->second, " and ", d, " both map to target id ", t);
    }
    if (in.t2d && (*in.t2d)[t] != 1 && disagree++ == 0) {
      first_disagree =
          StrCat("draft id ", d, " maps to target id ", t, " but t2d[", t, "] is ", (*in.t2d)[t]);
    }
    if (t <= prev && not_increasing++ == 0) {
      first_order = StrCat("draft id ", d, " maps to target id ", t, " after ", prev);
    }
    prev = t;
  }
  fig.out_of_range = out_of_range;
  fig.disagreements = disagree;
  if (out_of_range > 0) {
    add(Severity::kError, "d2t_out_of_range",
        StrCat(in.d2t_file, ": ", out_of_range, " draft ids map outside the target vocabulary of ",
               V,
               " (target id = draft id + "
               "d2t[draft id]; first: ",
               first_oor, ")"));
  }
  if (dups > 0) {
    add(Severity::kError, "d2t_duplicate",
        StrCat(in.d2t_file, ": ", dups,
               " draft ids map to a target id already taken (first: ", first_dup, ")"));
  }
  if (disagree > 0) {
    add(Severity::kError, "d2t_t2d_disagree",
        StrCat("d2t and t2d disagree: ", disagree,
               " draft ids map to target ids t2d does not mark (first: ", first_disagree,
               "); the mappings come from different vocabularies"));
  }
  if (in.t2d && disagree == 0 && out_of_range == 0 && dups == 0 &&
      static_cast<int64_t>(owner.size()) != fig.t2d_ones) {
    add(Severity::kError, "t2d_unmapped",
        StrCat("t2d marks ", fig.t2d_ones, " target ids but d2t reaches ", owner.size(),
               " of them"));
  }
  if (not_increasing > 0) {
    add(in.refengine_layout ? Severity::kError : Severity::kInfo, "d2t_order",
        StrCat(in.d2t_file, ": target ids are not in increasing order (first: ", first_order,
               "); EAGLE-3 tooling builds them sorted"));
  }
  return fig;
}

}  // namespace longhaul::inspect
