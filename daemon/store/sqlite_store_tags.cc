// Tags: names for stage results (docs/workflow-format.md, "Tags"), and what each run's
// `${tags.*}` references resolved to at its submission.
#include "core/strings.h"
#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/row_codec.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {
namespace {

constexpr const char* kTagColumns = "name, run_id, stage, stage_id, attempt_id, set_by, set_at_ms";

TagRow ReadTagRow(const Stmt& st) {
  TagRow t;
  t.name = st.Text(0);
  t.run_id = st.Int(1);
  t.stage = st.Text(2);
  t.stage_id = st.Int(3);
  t.attempt_id = st.OptInt(4);
  t.set_by = st.Text(5);
  t.set_at_ms = st.Int(6);
  return t;
}

Result<std::vector<TagUseRow>> QueryTagUses(Db* db, int64_t run_id) {
  return QueryAll(
      db,
      "SELECT key, tag, value, from_run_id, from_stage, from_stage_id FROM run_tag_uses "
      "WHERE run_id = ? ORDER BY key",
      [](const Stmt& st) {
        return TagUseRow{st.Text(0), st.Text(1), st.Text(2), st.Int(3), st.Text(4), st.Int(5)};
      },
      run_id);
}

}  // namespace

Status SqliteStore::PutTag(const TagRow& tag) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(StrCat("INSERT OR REPLACE INTO tags (", kTagColumns,
                                                      ") VALUES (?, ?, ?, ?, ?, ?, ?)")));
  st->Bind(1, tag.name)
      .Bind(2, tag.run_id)
      .Bind(3, tag.stage)
      .Bind(4, tag.stage_id)
      .Bind(5, tag.attempt_id)
      .Bind(6, tag.set_by)
      .Bind(7, tag.set_at_ms);
  return st->Run();
}

Result<bool> SqliteStore::DeleteTag(const std::string& name) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare("DELETE FROM tags WHERE name = ?"));
  st->Bind(1, name);
  RETURN_IF_ERROR(st->Run());
  return writer_->Changes() > 0;
}

Result<std::optional<TagRow>> SqliteStore::LoadTag(const std::string& name) {
  return QueryFirst(writer_.get(), StrCat("SELECT ", kTagColumns, " FROM tags WHERE name = ?"),
                    ReadTagRow, name);
}

Status SqliteStore::PutTagUses(int64_t run_id, const std::vector<TagUseRow>& uses) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare("INSERT OR REPLACE INTO run_tag_uses (run_id, key, "
                                               "tag, value, from_run_id, from_stage, "
                                               "from_stage_id) VALUES (?, ?, ?, ?, ?, ?, ?)"));
  for (const TagUseRow& u : uses) {
    st->Bind(1, run_id)
        .Bind(2, u.key)
        .Bind(3, u.tag)
        .Bind(4, u.value)
        .Bind(5, u.from_run_id)
        .Bind(6, u.from_stage)
        .Bind(7, u.from_stage_id);
    RETURN_IF_ERROR(st->Run());
  }
  return OkStatus();
}

Result<std::vector<TagUseRow>> SqliteStore::LoadTagUses(int64_t run_id) {
  return QueryTagUses(writer_.get(), run_id);
}

Result<std::vector<TagUseRow>> SqliteStore::ReadTagUses(int64_t run_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return QueryTagUses(db.get(), run_id);
}

Result<std::vector<std::pair<int64_t, std::string>>> SqliteStore::ReadTagReaders(int64_t stage_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return QueryAll(
      db.get(),
      "SELECT DISTINCT run_id, tag FROM run_tag_uses WHERE from_stage_id = ? ORDER BY run_id, tag",
      [](const Stmt& st) { return std::make_pair(st.Int(0), st.Text(1)); }, stage_id);
}

Result<std::vector<TagRow>> SqliteStore::ListTags(int64_t run_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  if (run_id > 0) {
    return QueryAll(db.get(),
                    StrCat("SELECT ", kTagColumns, " FROM tags WHERE run_id = ? ORDER BY name"),
                    ReadTagRow, run_id);
  }
  return QueryAll(db.get(), StrCat("SELECT ", kTagColumns, " FROM tags ORDER BY name"), ReadTagRow);
}

Result<std::vector<TagTarget>> SqliteStore::ReadTagTargets(const std::vector<std::string>& names) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  std::vector<TagTarget> out;
  for (const std::string& name : names) {
    ASSIGN_OR_RETURN(
        std::optional<TagTarget> target,
        QueryFirst(
            db.get(),
            "SELECT t.name, t.run_id, t.stage, t.stage_id, t.attempt_id, t.set_by, "
            "t.set_at_ms, s.outputs_json FROM tags t JOIN stages s ON s.id = t.stage_id "
            "WHERE t.name = ?",
            [](const Stmt& st) {
              return TagTarget{ReadTagRow(st), internal::JsonToMap(st.Text(7))};
            },
            name));
    if (target) out.push_back(std::move(*target));
  }
  return out;
}

}  // namespace longhaul::store
