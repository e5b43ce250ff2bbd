// Keeps what the agent sends parseable. A proto3 `string` must be UTF-8: a message with a
// string that is not fails to parse at the coordinator, which drops the stream; the agent,
// reconnecting, would send the same message again, forever. Text from outside (event lines,
// GPU names, host names, error messages with paths) therefore passes through here first.
#pragma once

#include <google/protobuf/message.h>

namespace longhaul::agent {

// Replaces, in every string field of `msg` and of the messages in it (repeated fields and
// maps included, not `bytes` fields), each byte that is not part of well-formed UTF-8 with
// U+FFFD (core/utf8.h). Returns how many fields it changed.
int RepairUtf8(google::protobuf::Message* msg);

}  // namespace longhaul::agent
