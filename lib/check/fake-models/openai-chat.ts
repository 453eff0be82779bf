/**
 * A fake model backend on 127.0.0.1 for real agents under test: the OpenAI Chat Completions API,
 * which OpenAI-compatible providers speak, enough for opencode given a provider whose `baseURL`
 * points at it.
 *
 * `POST /v1/chat/completions` with `stream: true` is answered with server-sent events of
 * `chat.completion.chunk`s: the role, one `content` delta per word, `finish_reason` `stop`, a
 * `usage` chunk, then `[DONE]`; without `stream`, with the whole completion as JSON. `GET
 * /v1/models` lists the one model; anything else 404. The prompt read is the text of the last
 * `user` message.
 *
 * A scripted tool call (api.ts) is a `tool_calls` delta (`finish_reason` `tool_calls`); its result
 * comes back as a `tool` message with that `tool_call_id`.
 */
import { bodyOf, contentText, type FakeApi, lastWithRole, startFakeApi } from './api';
import type { FakeModelBackend } from './host';
import { type ReplyFormat, type SseEvent, sendJson } from './sse';
import { type CarriedResult, type OfferedTool, resultText } from './tool-call-script';

/** The fake backend: `baseUrl` is `http://127.0.0.1:PORT/v1`, a provider's `baseURL`. */
export type FakeChatServer = FakeModelBackend;

/** The model the fake lists and answers as. */
export const FAKE_CHAT_MODEL = 'fake-model';

const usageOf = (outputTokens: number): object => ({ prompt_tokens: 10, completion_tokens: outputTokens, total_tokens: 10 + outputTokens });

function format(id: string): ReplyFormat {
  const chunk = (choices: object[], extra: object = {}): SseEvent => ({
    data: { id: `chatcmpl-${id}`, object: 'chat.completion.chunk', created: 0, model: FAKE_CHAT_MODEL, choices, ...extra },
  });
  const choice = (delta: object, finishReason: string | null = null): object => ({ index: 0, delta, finish_reason: finishReason });
  const end = (reason: string, words: number): SseEvent[] => [
    chunk([choice({}, reason)]),
    chunk([], { usage: usageOf(words) }),
    { data: '[DONE]' },
  ];
  return {
    head: () => [chunk([choice({ role: 'assistant', content: '' })])],
    delta: (content) => [chunk([choice({ content })])],
    tail: (_text, words) => end('stop', words),
    call: (call) => [
      chunk([choice({ role: 'assistant', content: null })]),
      chunk([
        choice({
          tool_calls: [
            { index: 0, id: call.callId, type: 'function', function: { name: call.tool.name, arguments: JSON.stringify(call.arguments) } },
          ],
        }),
      ]),
      ...end('tool_calls', 5),
    ],
  };
}

const pathOf = (url: string | undefined): string => (url ?? '').split('?')[0]!;

/** The Chat Completions API. */
const CHAT_API: FakeApi = {
  baseUrl: (port) => `http://127.0.0.1:${port}/v1`,
  callIdPrefix: 'call_',
  kindOf: (request, body) => {
    if (request.method !== 'POST' || !pathOf(request.url).endsWith('/chat/completions')) return 'other';
    return bodyOf(body).stream === true ? 'stream' : 'whole';
  },
  answerOther: (request, response) => {
    if (request.method === 'GET' && pathOf(request.url).endsWith('/models'))
      return sendJson(response, 200, {
        object: 'list',
        data: [{ id: FAKE_CHAT_MODEL, object: 'model', created: 0, owned_by: 'acp-wire' }],
      });
    sendJson(response, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
  },
  tools: (body): OfferedTool[] => {
    const tools = bodyOf(body).tools;
    if (!Array.isArray(tools)) return [];
    return tools
      .map((tool: { function?: { name?: unknown } }) => tool?.function?.name)
      .filter((name): name is string => typeof name === 'string')
      .map((name) => ({ qualifiedName: name, name }));
  },
  results: (body): CarriedResult[] => {
    const messages = bodyOf(body).messages;
    if (!Array.isArray(messages)) return [];
    return messages
      .filter((message: { role?: unknown; tool_call_id?: unknown }) => message?.role === 'tool' && typeof message.tool_call_id === 'string')
      .map((message: { tool_call_id: string; content?: unknown }) => ({
        callId: message.tool_call_id,
        output: message.content,
        text: resultText(message.content),
      }));
  },
  lastUserText: (body) => contentText(lastWithRole(bodyOf(body).messages, 'user')?.content),
  format,
  whole: (id, _body, text) => ({
    id: `chatcmpl-${id}`,
    object: 'chat.completion',
    created: 0,
    model: FAKE_CHAT_MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: usageOf(text.split(' ').length),
  }),
};

/** Starts a fake Chat Completions API server on 127.0.0.1 (a free port). */
export function startFakeChatServer(reply?: string): Promise<FakeChatServer> {
  return startFakeApi(CHAT_API, reply);
}
