// Agent: the coordinator's questions about logs and artifacts, which stay on the node.
#include <sys/stat.h>

#include "agent/lib/agent.h"
#include "agent/lib/log_reader.h"
#include "agent/lib/retention.h"
#include "core/log_read.h"
#include "core/strings.h"

namespace longhaul::agent {

void Agent::HandleReadLog(const v1::ReadLog& req) {
  v1::AgentMessage m;
  v1::LogData* out = m.mutable_log();
  out->set_request_id(req.request_id());
  AttemptDir dir(config_.state_dir, req.attempt_id());
  if (req.stream() != "stdout" && req.stream() != "stderr") {
    out->set_error(StrCat("unknown log stream '", req.stream(), "' (stdout or stderr)"));
  } else if (!dir.Exists()) {
    out->set_error(
        StrCat("attempt ", req.attempt_id(), " has no directory on agent ", config_.agent_id));
  } else {
    auto slice =
        ReadLogSlice(dir.log_path(req.stream()), req.offset(), ClampLogReadBytes(req.max_bytes()));
    if (slice.ok()) {
      out->set_data(std::move(slice->data));
      out->set_offset(slice->offset);
      out->set_size(slice->size);
    } else if (absl::IsNotFound(slice.status())) {
      out->set_offset(0);  // the stage has not written (or started) yet: an empty log
      out->set_size(0);
    } else {
      out->set_error(ToStd(slice.status().message()));
    }
  }
  Send(std::move(m));
}

void Agent::HandleCheckArtifacts(const v1::CheckArtifacts& req) {
  v1::AgentMessage m;
  v1::ArtifactCheck* out = m.mutable_artifacts();
  out->set_request_id(req.request_id());
  for (const std::string& p : req.paths()) {
    std::string path = !p.empty() && p[0] == '/' ? p : StrCat(config_.data_dir, "/", p);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) out->add_missing(p);
  }
  Send(std::move(m));
}

void Agent::HandleRemoveAttempts(const v1::RemoveAttempts& req) {
  OnPool<v1::AttemptsRemoved>(
      disk_worker_,
      [req, state = config_.state_dir, data = config_.data_dir] {
        return RemoveAttemptFiles(req, state, data);
      },
      [this](v1::AttemptsRemoved removed) {
        if (!removed.errors().empty()) {
          log_->warn("retention left {} path(s): {}", removed.errors_size(), removed.errors(0));
        }
        v1::AgentMessage m;
        *m.mutable_removed() = std::move(removed);
        Send(std::move(m));
      });
}

}  // namespace longhaul::agent
