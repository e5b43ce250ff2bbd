#include "stages/datagen/sample_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::stages {

Result<SampleStore> SampleStore::Open(const std::string& out_path, const std::string& failed_path) {
  SampleStore s;
  ASSIGN_OR_RETURN(JsonlRecovery rec, RecoverJsonl(out_path));
  s.truncated_bytes_ = rec.truncated_bytes;
  for (size_t i = 0; i < rec.records.size(); ++i) {
    const auto& r = rec.records[i];
    auto id = r.is_object() ? r.find("id") : r.end();
    if (!r.is_object() || id == r.end() || !(id->is_string() || id->is_number_integer())) {
      return absl::DataLossError(
          StrCat(out_path, ":", i + 1, ": a sample without an id (not lh-datagen's output?)"));
    }
    s.finished_.insert(id->is_string() ? id->get<std::string>() : id->dump());
  }
  ASSIGN_OR_RETURN(s.out_, JsonlAppender::Open(out_path));
  int fd = ::open(failed_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create", failed_path, errno);
  ::close(fd);
  ASSIGN_OR_RETURN(s.failed_, JsonlAppender::Open(failed_path));
  return s;
}

Status SampleStore::AppendSample(const Conversation& sample) {
  if (finished_.count(sample.id) > 0) {
    return absl::FailedPreconditionError(
        StrCat("sample '", sample.id, "' is already in ", out_.path()));
  }
  RETURN_IF_ERROR(out_.Append(ConversationToJson(sample)));
  finished_.insert(sample.id);
  return OkStatus();
}

Status SampleStore::AppendFailure(const Conversation& sample, const std::string& error,
                                  int attempts) {
  nlohmann::json j = {{"id", sample.id_json.is_null() ? nlohmann::json(sample.id) : sample.id_json},
                      {"error", error},
                      {"attempts", attempts}};
  return failed_.Append(j);
}

Status SampleStore::Sync() {
  RETURN_IF_ERROR(out_.Sync());
  return failed_.Sync();
}

}  // namespace longhaul::stages
