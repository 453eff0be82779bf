/**
 * A fake model backend on 127.0.0.1 for real agents under test: the Anthropic Messages API, enough
 * for the Claude Code CLI that claude-code-acp and claude-agent-acp start (`ANTHROPIC_BASE_URL`).
 *
 * `POST /v1/messages` with `stream: true` is answered with server-sent events `message_start`,
 * `content_block_start`, one `content_block_delta` (`text_delta`) per word, `content_block_stop`,
 * `message_delta` (`stop_reason` `end_turn`) and `message_stop`; without `stream`, with the whole
 * message as JSON. Its `usage` has every member the API sends (cache counts included).
 * `POST /v1/messages/count_tokens` gets a token count; `HEAD /` (the CLI's reachability check) 200;
 * anything else 404. The prompt read is the last text part of the last user message: after an
 * interrupted turn, the Claude Code CLI sends the interrupted prompt, "[Request interrupted by
 * user]" and the new prompt as the parts of one user message. A request that offers no tools is
 * the CLI's own (a session title quoting the prompt), and is never held.
 *
 * A scripted tool call (api.ts) is a `tool_use` content block (`input_json_delta`, `stop_reason`
 * `tool_use`); its result comes back as a `tool_result` block with that `tool_use_id`.
 */
import { bodyOf, type FakeApi, lastWithRole, partText, startFakeApi } from './api';
import { type FakeModelBackend, HOLD_MARKER, type HeldTurn, type RecordedRequest } from './host';
import { type ReplyFormat, type SseEvent, sendJson } from './sse';
import { type CarriedResult, type MadeCall, type OfferedTool, resultText } from './tool-call-script';

export { HOLD_MARKER, type HeldTurn, type RecordedRequest };

/** The fake backend: `baseUrl` is `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL`. */
export type FakeAnthropicServer = FakeModelBackend;

/** A Messages API `usage` with every member the API sends (the Claude agents add up the token counts). */
function usageOf(outputTokens: number): Record<string, unknown> {
  return {
    input_tokens: 10,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

/** A whole assistant message as the non-streaming API returns it. */
function wholeMessage(id: string, model: string, text: string): Record<string, unknown> {
  return {
    id: `msg_fake_${id}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: usageOf(text.split(' ').length),
  };
}

const event = (type: string, fields: object): SseEvent => ({ event: type, data: { type, ...fields } });

function format(id: string, model: string): ReplyFormat {
  const start = (): SseEvent => event('message_start', { message: { ...wholeMessage(id, model, ''), content: [], stop_reason: null } });
  const end = (reason: string, words: number): SseEvent[] => [
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: reason, stop_sequence: null }, usage: usageOf(words) }),
    event('message_stop', {}),
  ];
  return {
    head: () => [start(), event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })],
    delta: (text) => [event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })],
    tail: (_text, words) => end('end_turn', words),
    call: (call: MadeCall) => [
      start(),
      event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: call.callId, name: call.tool.name, input: {} } }),
      event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.arguments) } }),
      ...end('tool_use', 5),
    ],
  };
}

const pathOf = (url: string | undefined): string => (url ?? '').split('?')[0]!;

/** The Messages API. */
const MESSAGES_API: FakeApi = {
  baseUrl: (port) => `http://127.0.0.1:${port}`,
  callIdPrefix: 'toolu_',
  kindOf: (request, body) => {
    if (request.method !== 'POST' || pathOf(request.url) !== '/v1/messages') return 'other';
    return bodyOf(body).stream === true ? 'stream' : 'whole';
  },
  answerOther: (request, response) => {
    if (request.method === 'HEAD' && pathOf(request.url) === '/') return void response.writeHead(200).end();
    if (request.method === 'POST' && pathOf(request.url) === '/v1/messages/count_tokens')
      return sendJson(response, 200, { input_tokens: 10 });
    sendJson(response, 404, { type: 'error', error: { type: 'not_found_error', message: 'not found' } });
  },
  tools: (body): OfferedTool[] => {
    const tools = bodyOf(body).tools;
    if (!Array.isArray(tools)) return [];
    return tools
      .filter((tool: { name?: unknown }) => typeof tool?.name === 'string')
      .map((tool: { name: string }) => ({ qualifiedName: tool.name, name: tool.name }));
  },
  results: (body): CarriedResult[] => {
    const messages = bodyOf(body).messages;
    if (!Array.isArray(messages)) return [];
    return messages.flatMap((message: { content?: unknown }) =>
      (Array.isArray(message?.content) ? message.content : [])
        .filter(
          (block: { type?: unknown; tool_use_id?: unknown }) => block?.type === 'tool_result' && typeof block.tool_use_id === 'string',
        )
        .map((block: { tool_use_id: string; content?: unknown }) => ({
          callId: block.tool_use_id,
          output: block.content,
          text: resultText(block.content),
        })),
    );
  },
  lastUserText: (body) => {
    const content = lastWithRole(bodyOf(body).messages, 'user')?.content;
    if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
    return (
      content
        .map(partText)
        .filter((text) => text !== '')
        .at(-1) ?? ''
    );
  },
  // The CLI's own requests (a session title, which quotes the prompt; a permission classifier) offer no tools.
  isHelper: (body) => {
    const tools = bodyOf(body).tools;
    return !Array.isArray(tools) || tools.length === 0;
  },
  format: (id, body) => format(id, String(bodyOf(body).model ?? 'claude-fake')),
  whole: (id, body, text) => wholeMessage(id, String(bodyOf(body).model ?? 'claude-fake'), text),
};

/** Starts a fake Messages API server on 127.0.0.1 (a free port). */
export function startFakeAnthropicServer(reply?: string): Promise<FakeAnthropicServer> {
  return startFakeApi(MESSAGES_API, reply);
}
