// POST /v1/chat/completions and /v1/completions: parse, tokenize, submit to the engine loop,
// and turn each step's output into an SSE chunk or, at the end, one JSON response.

#include <chrono>

#include "core/strings.h"
#include "stages/refengine/server_impl.h"

namespace longhaul::refengine {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One request in flight: what its responses need across steps.
struct InFlight {
  ResponseMeta meta;
  bool chat = true;
  bool stream = false;
  bool include_usage = false;
  Clock::time_point arrived;
  Clock::time_point last_delivery;
  bool first = true;
  std::string content, reasoning;
};

}  // namespace

uint64_t RefEngineServer::Impl::NextRequestSeed() {
  // Requests without a seed still get a reproducible stream per server seed and arrival order.
  return options_.seed * 0x9e3779b97f4a7c15ull + next_id_;
}

void RefEngineServer::Impl::Generate(const net::ServerRequest& req,
                                     std::shared_ptr<net::HttpResponder> resp, bool chat) {
  if (!loaded_) {
    resp->Send(503, "application/json", ErrorJson(503, "model is loading"));
    return;
  }
  ++generation_requests_;
  if (options_.crash_after >= 0 && generation_requests_ > options_.crash_after) {
    crash_();
    return;
  }
  auto parsed = chat ? ParseChatRequest(req.body) : ParseCompletionRequest(req.body);
  if (!parsed.ok()) {
    resp->Send(400, "application/json", ErrorJson(400, ToStd(parsed.status().message())));
    return;
  }
  ApiRequest& api = *parsed;
  if (!api.model.empty() && api.model != options_.model_name) {
    resp->Send(404, "application/json",
               ErrorJson(404, StrCat("The model `", api.model, "` does not exist.")));
    return;
  }
  std::string prompt_text = api.prompt;
  if (chat) {
    auto rendered = refmodel::RenderChat(api.messages, /*add_generation_prompt=*/true);
    if (!rendered.ok()) {
      resp->Send(400, "application/json", ErrorJson(400, ToStd(rendered.status().message())));
      return;
    }
    prompt_text = std::move(*rendered);
  }
  EngineRequest er;
  er.id = next_id_++;
  er.prompt = target_->tokenizer().Encode(prompt_text);
  const int prompt_len = static_cast<int>(er.prompt.size());
  if (prompt_len >= options_.max_model_len) {
    resp->Send(400, "application/json",
               ErrorJson(400, StrCat("the prompt has ", prompt_len,
                                     " tokens; this model's maximum context length is ",
                                     options_.max_model_len)));
    return;
  }
  int room = options_.max_model_len - prompt_len;
  if (api.max_tokens && *api.max_tokens > room) {
    resp->Send(400, "application/json",
               ErrorJson(400, StrCat("max_tokens ", *api.max_tokens, " plus the prompt's ",
                                     prompt_len, " tokens exceed the maximum context length ",
                                     options_.max_model_len)));
    return;
  }
  er.max_tokens = api.max_tokens.value_or(room);
  er.params = refmodel::SamplingParams{api.temperature, api.top_p};
  er.seed = api.seed.value_or(NextRequestSeed());
  er.chat = chat;
  er.ignore_eos = api.ignore_eos;
  er.stop = std::move(api.stop);

  auto st = std::make_shared<InFlight>();
  st->meta.id = StrCat(chat ? "chatcmpl-" : "cmpl-", er.id);
  st->meta.created = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  st->meta.model = options_.model_name;
  st->meta.reasoning_field = options_.reasoning_field;
  st->chat = chat;
  st->stream = api.stream;
  st->include_usage = api.include_usage;
  st->arrived = Clock::now();

  uint64_t id = er.id;
  resp->OnClose([this, id] { loop_->Cancel(id); });
  loop_->Submit(std::move(er), [this, st, resp](const RequestOutput& o) {
    Clock::time_point now = Clock::now();
    if (st->first) {
      metrics_.ttft.Observe(Seconds(now - st->arrived));
    } else if (o.new_tokens > 0) {
      metrics_.inter_token.Observe(Seconds(now - st->last_delivery) / o.new_tokens);
    }
    st->last_delivery = now;
    if (o.finished) {
      metrics_.e2e.Observe(Seconds(now - st->arrived));
      ++metrics_.requests_success;
    }
    if (!st->stream) {
      st->first = false;
      st->content += o.delta.content;
      st->reasoning += o.delta.reasoning;
      if (!o.finished) return;
      resp->Send(200, "application/json",
                 st->chat ? ChatResponseJson(st->meta, st->content, st->reasoning, o.finish_reason,
                                             o.prompt_tokens, o.completion_tokens)
                          : CompletionResponseJson(st->meta, st->content, o.finish_reason,
                                                   o.prompt_tokens, o.completion_tokens));
      return;
    }
    if (st->first) resp->StartStream(200, "text/event-stream");
    // One chunk per engine step, holding every token the step produced for this request
    // (several under speculative decoding). The last chunk carries finish_reason.
    std::string events;
    if (st->chat) {
      if (st->first || !o.delta.empty() || o.finished) {
        events += ChatChunkEvent(st->meta, o.delta, st->first, o.finished ? o.finish_reason : "");
      }
    } else if (!o.delta.content.empty() || o.finished) {
      events += CompletionChunkEvent(st->meta, o.delta.content, o.finished ? o.finish_reason : "");
    }
    st->first = false;
    if (o.finished) {
      if (st->include_usage) {
        events += UsageChunkEvent(st->meta, st->chat, o.prompt_tokens, o.completion_tokens);
      }
      events += kDoneEvent;
    }
    resp->Write(std::move(events));
    if (o.finished) resp->End();
  });
}

}  // namespace longhaul::refengine
