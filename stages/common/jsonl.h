// JSONL files of the campaign (docs/engines.md): conversations in and out of lh-datagen, prompts
// for lh-bench, and crash-safe appending.
//
// Input records are accepted in three shapes:
//   {"id": .., "conversations": [{"role": "user", "content": ..}, ..]}   (conversations)
//   {"id": .., "conversations": [{"from": "human", "value": ..}, ..]}    (ShareGPT)
//   {"id": .., "messages": [{"role": "user", "content": ..}, ..]}        (OpenAI messages)
// in a JSONL file or in one JSON array (as ShareGPT dumps are distributed). A record without
// an "id" gets its 0-based position in the file as its id.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "stages/common/openai.h"

namespace longhaul::stages {

struct Conversation {
  std::string id;                     // the id as text (a numeric id printed as a number)
  nlohmann::json id_json;             // the id as it was in the input, written back unchanged
  std::vector<ChatMessage> messages;  // roles normalised to system / user / assistant
  std::string reasoning;              // top-level "reasoning", if the record had one
};

// Parses one record. `where` ("prompts.jsonl:12") prefixes every error.
Result<Conversation> ParseConversation(const nlohmann::json& record, std::string_view where,
                                       size_t index);

// Reads every record of a conversations/ShareGPT/messages file (JSONL or a JSON array).
// Errors name the file and line: "prompts.jsonl:12: conversations[1]: missing 'content'".
Result<std::vector<Conversation>> ReadConversations(const std::string& path);

// The record lh-datagen writes: {"id", "conversations": [{"role","content"}..], "reasoning"}.
// An assistant turn with reasoning text also carries it as "reasoning" in its own object.
nlohmann::json ConversationToJson(const Conversation& c);

// What a JSONL file held when it was opened for resuming.
struct JsonlRecovery {
  std::vector<nlohmann::json> records;  // every complete line, in order
  int64_t truncated_bytes = 0;          // the size of a torn last line that was cut off
};

// Reads `path` (a missing file is empty) and truncates a torn last line (one not ended by
// '\n', as a kill -9 in the middle of a write leaves it), so appending can continue. A
// complete line that is not JSON is corruption: an error naming the file and line.
Result<JsonlRecovery> RecoverJsonl(const std::string& path);

// Appends records to a JSONL file, one write(2) of one whole line each, on an O_APPEND
// descriptor: a crash loses at most the line being written, never interleaves two.
// Not thread-safe (the stages append from one event loop).
class JsonlAppender {
 public:
  static Result<JsonlAppender> Open(const std::string& path);
  JsonlAppender() = default;
  JsonlAppender(JsonlAppender&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  JsonlAppender& operator=(JsonlAppender&& o) noexcept;
  ~JsonlAppender();

  Status Append(const nlohmann::json& record);
  // fdatasync: call at the end of a run (a kill -9 never loses a write(2) already made;
  // only a machine crash would).
  Status Sync();
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace longhaul::stages
