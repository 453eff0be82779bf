/**
 * A fake model backend on 127.0.0.1 for real agents under test: the OpenAI Responses API
 * (`POST /v1/responses`, answered as a stream of server-sent events), enough for codex.
 *
 * Each turn streams `response.created`, `response.output_item.added`, one
 * `response.output_text.delta` per word, `response.output_item.done` and `response.completed`.
 *
 * A scripted tool call (api.ts) is a `function_call` output item (inside its namespace for codex's
 * MCP tools: `namespace` `mcp__SERVER`, `name` the tool's); its result comes back as a
 * `function_call_output` with that `call_id` in the request's `input`.
 */
import { bodyOf, contentText, type FakeApi, lastWithRole, startFakeApi } from './api';
import { type FakeModelBackend, HOLD_MARKER, type HeldTurn, type RecordedRequest } from './host';
import { type ReplyFormat, type SseEvent, sendJson } from './sse';
import { type CarriedResult, type MadeCall, type OfferedTool, resultText } from './tool-call-script';

export { HOLD_MARKER, type HeldTurn, type RecordedRequest };

/** The fake backend: `baseUrl` is `http://127.0.0.1:PORT/v1`, the provider's `base_url`. */
export type FakeModelServer = FakeModelBackend;

const event = (type: string, fields: object): SseEvent => ({ event: type, data: { type, ...fields } });

function usageOf(outputTokens: number): object {
  return {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 10 + outputTokens,
  };
}

function format(id: string): ReplyFormat {
  const responseId = `resp_${id}`;
  const itemId = `msg_${responseId}`;
  const message = (content: unknown[]): object => ({ type: 'message', id: itemId, role: 'assistant', status: 'in_progress', content });
  const created = event('response.created', { response: { id: responseId, status: 'in_progress', output: [] } });
  const completed = (words: number): SseEvent =>
    event('response.completed', { response: { id: responseId, status: 'completed', usage: usageOf(words) } });
  return {
    head: () => [created, event('response.output_item.added', { output_index: 0, item: message([]) })],
    delta: (delta) => [event('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta })],
    tail: (text, words) => [
      event('response.output_item.done', { output_index: 0, item: message([{ type: 'output_text', text, annotations: [] }]) }),
      completed(words),
    ],
    call: (call: MadeCall) => {
      const item = {
        type: 'function_call',
        id: `fc_${responseId}`,
        call_id: call.callId,
        name: call.tool.name,
        ...(call.tool.namespace === undefined ? {} : { namespace: call.tool.namespace }),
        arguments: JSON.stringify(call.arguments),
      };
      return [
        created,
        event('response.output_item.added', { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } }),
        event('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: item.arguments }),
        event('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: item.arguments }),
        event('response.output_item.done', { output_index: 0, item: { ...item, status: 'completed' } }),
        completed(5),
      ];
    },
  };
}

/** The tools a Responses API request offers: its functions, and those inside its namespaces. */
function offeredTools(body: unknown): OfferedTool[] {
  const tools = bodyOf(body).tools;
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool: { type?: unknown; name?: unknown; tools?: unknown }): OfferedTool[] => {
    if (typeof tool?.name !== 'string') return [];
    if (tool.type !== 'namespace' || !Array.isArray(tool.tools)) return [{ qualifiedName: tool.name, name: tool.name }];
    const namespace = tool.name;
    return tool.tools
      .filter((inner: { name?: unknown }) => typeof inner?.name === 'string')
      .map((inner: { name: string }) => ({ qualifiedName: `${namespace}__${inner.name}`, name: inner.name, namespace }));
  });
}

/** The Responses API. */
const RESPONSES_API: FakeApi = {
  baseUrl: (port) => `http://127.0.0.1:${port}/v1`,
  callIdPrefix: 'call_',
  kindOf: (request) => (request.method === 'POST' && request.url?.endsWith('/responses') ? 'stream' : 'other'),
  answerOther: (_request, response) => sendJson(response, 404, { error: { message: 'not found' } }),
  tools: offeredTools,
  results: (body): CarriedResult[] => {
    const input = bodyOf(body).input;
    if (!Array.isArray(input)) return [];
    return input
      .filter((item: { type?: unknown; call_id?: unknown }) => item?.type === 'function_call_output' && typeof item.call_id === 'string')
      .map((item: { call_id: string; output?: unknown }) => ({ callId: item.call_id, output: item.output, text: resultText(item.output) }));
  },
  lastUserText: (body) => contentText(lastWithRole(bodyOf(body).input, 'user')?.content),
  format,
  whole: (id, _body, text) => ({
    id: `resp_${id}`,
    status: 'completed',
    output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }],
  }),
};

/** Starts a fake Responses API server on 127.0.0.1 (a free port). */
export function startFakeModelServer(reply?: string): Promise<FakeModelServer> {
  return startFakeApi(RESPONSES_API, reply);
}
