#include "stages/serve/engine_output.h"

#include <cerrno>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::stages {

Result<std::unique_ptr<EngineOutput>> EngineOutput::Open(const std::string& stdout_log,
                                                         const std::string& stderr_log, bool echo,
                                                         LineFn on_line) {
  std::unique_ptr<EngineOutput> out(new EngineOutput(echo, std::move(on_line)));
  for (auto [path, slot] :
       {std::pair{&stdout_log, &out->out_log_}, std::pair{&stderr_log, &out->err_log_}}) {
    if (path->empty()) continue;
    *slot = std::fopen(path->c_str(), "ae");
    if (*slot == nullptr) return ErrnoStatus("open engine log", *path, errno);
  }
  return out;
}

EngineOutput::~EngineOutput() {
  if (out_log_) std::fclose(out_log_);
  if (err_log_) std::fclose(err_log_);
}

void EngineOutput::Feed(bool is_stderr, std::string_view bytes) {
  (is_stderr ? err_lines_ : out_lines_).Feed(bytes, [this, is_stderr](std::string_view line) {
    Line(is_stderr, line);
  });
}

void EngineOutput::End(bool is_stderr) {
  (is_stderr ? err_lines_ : out_lines_).Finish([this, is_stderr](std::string_view line) {
    Line(is_stderr, line);
  });
}

void EngineOutput::Line(bool is_stderr, std::string_view line) {
  // One write per line, so the engine's lines stay whole among lh-serve's own (stderr is
  // unbuffered).
  std::string text = StrCat(line, "\n");
  for (std::FILE* f : {is_stderr ? err_log_ : out_log_,
                       echo_ ? (is_stderr ? stderr : stdout) : static_cast<std::FILE*>(nullptr)}) {
    if (f == nullptr) continue;
    std::fwrite(text.data(), 1, text.size(), f);
    std::fflush(f);
  }
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (on_line_) on_line_(is_stderr, line);
}

}  // namespace longhaul::stages
