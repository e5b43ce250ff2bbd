// Tags as the UI shows them (docs/workflow-format.md, "Tags"): the tags on a run's stages, and
// where a run's ${tags.*} values came from, one entry a tag. Pure; views/RunView.tsx draws them.
import type { RunTag, TagUse } from "../api/types";

/** "best-drafter (train)", by tag name. */
export function tagsOnRun(tags: RunTag[]): string[] {
  return [...tags].sort((a, b) => a.name.localeCompare(b.name)).map((t) => `${t.name} (${t.stage})`);
}

export interface TagSource { tag: string; run: number; stage: string }

/** One entry a tag (a tag read for two outputs is one source), by tag name. */
export function tagSources(uses: TagUse[]): TagSource[] {
  const by = new Map<string, TagSource>();
  for (const u of uses) by.set(u.tag, { tag: u.tag, run: u.run_id, stage: u.stage });
  return [...by.values()].sort((a, b) => a.tag.localeCompare(b.tag));
}

/** "tags.best-drafter -> run 41 train", as the CLI says it. */
export function tagSourceText(s: TagSource): string {
  return `tags.${s.tag} -> run ${s.run} ${s.stage}`;
}
