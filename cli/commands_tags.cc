// tag, tags: names for stage results that later workflows read (docs/workflow-format.md,
// "Tags").
#include <charconv>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/table.h"
#include "core/strings.h"

namespace longhaul::cli {

int TagCommand(CommandContext& ctx, const std::vector<std::string>& args, bool force, bool remove) {
  if (remove) {
    if (args.size() != 1) {
      return ctx.Fail(absl::InvalidArgumentError(
          StrCat("tag --rm takes one NAME, got ", args.size(), " arguments")));
    }
    v1::RemoveTagRequest req;
    req.set_name(args[0]);
    Result<v1::Tag> was = ctx.coordinator->RemoveTag(req);
    if (!was.ok()) return ctx.Fail(was.status());
    if (ctx.json) return PrintJson(ctx, *was);
    ctx.out() << "removed tag " << was->name() << " (was on " << was->previous() << ")\n";
    return kExitOk;
  }
  if (args.size() != 3) {
    return ctx.Fail(absl::InvalidArgumentError(
        StrCat("tag takes RUN STAGE NAME (or --rm NAME), got ", args.size(), " arguments")));
  }
  int64_t run_id = 0;
  const std::string& run = args[0];
  auto [end, ec] = std::from_chars(run.data(), run.data() + run.size(), run_id);
  if (ec != std::errc() || end != run.data() + run.size() || run_id <= 0) {
    return ctx.Fail(absl::InvalidArgumentError(
        StrCat("tag: RUN must be a run id (a number > 0), got '", run, "'")));
  }
  v1::SetTagRequest req;
  req.set_run_id(run_id);
  req.set_stage(args[1]);
  req.set_name(args[2]);
  req.set_force(force);
  Result<v1::Tag> tag = ctx.coordinator->SetTag(req);
  if (!tag.ok()) return ctx.Fail(tag.status());
  if (ctx.json) return PrintJson(ctx, *tag);
  ctx.out() << "tag " << tag->name() << " -> run " << tag->run_id() << " " << tag->stage();
  if (!tag->previous().empty()) ctx.out() << " (moved from " << tag->previous() << ")";
  ctx.out() << "\n";
  return kExitOk;
}

std::string TagsOnRunText(const v1::Run& run) {
  std::vector<std::string> parts;
  for (const v1::Tag& t : run.tags()) parts.push_back(StrCat(t.name(), " (", t.stage(), ")"));
  return StrJoin(parts, ", ");
}

std::vector<std::string> TagUseLines(const google::protobuf::RepeatedPtrField<v1::TagUse>& uses) {
  std::map<std::string, std::string> by_tag;
  for (const v1::TagUse& u : uses) {
    by_tag[u.tag()] = StrCat("tags.", u.tag(), " -> run ", u.run_id(), " ", u.stage());
  }
  std::vector<std::string> out;
  for (auto& [tag, line] : by_tag) out.push_back(std::move(line));
  return out;
}

int ListTags(CommandContext& ctx, int64_t run_id) {
  v1::ListTagsRequest req;
  req.set_run_id(run_id);
  Result<v1::ListTagsResponse> resp = ctx.coordinator->ListTags(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  if (resp->tags().empty()) {
    ctx.err() << (run_id > 0 ? StrCat("no tags on run ", run_id) : std::string("no tags")) << "\n";
    return kExitOk;
  }
  Table table({"NAME", "RUN", "STAGE", "SET BY", "WHEN"});
  table.AlignRight(1);
  for (const v1::Tag& t : resp->tags()) {
    table.AddRow({t.name(), std::to_string(t.run_id()), t.stage(),
                  t.set_by().empty() ? "-" : t.set_by(), FormatLocalTime(t.set_at_ms())});
  }
  table.Render(ctx.out());
  return kExitOk;
}

}  // namespace longhaul::cli
