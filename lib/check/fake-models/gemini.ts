/**
 * A fake model backend on 127.0.0.1 for real agents under test: the Gemini API
 * (`generativelanguage`), enough for gemini-cli pointed at it by `GOOGLE_GEMINI_BASE_URL`.
 *
 * `POST /v1beta/models/MODEL:streamGenerateContent` is answered with server-sent events, each a
 * `GenerateContentResponse` carrying one word of a `model` content, the last one with
 * `finishReason` `STOP` and `usageMetadata`; `:generateContent` with the whole response as JSON;
 * `:countTokens` with a count; anything else 404. The prompt read is the text of the last `user`
 * content.
 *
 * A scripted tool call (api.ts) is a `functionCall` part (with `id`, the call id); its result comes
 * back as a `functionResponse` part with that `id`.
 */
import { bodyOf, type FakeApi, lastWithRole, startFakeApi } from './api';
import type { FakeModelBackend } from './host';
import { type ReplyFormat, sendJson } from './sse';
import { type CarriedResult, type OfferedTool, resultText } from './tool-call-script';

/** The fake backend: `baseUrl` is `http://127.0.0.1:PORT`, for `GOOGLE_GEMINI_BASE_URL`. */
export type FakeGeminiServer = FakeModelBackend;

const MODEL_VERSION = 'gemini-fake';

/** A `GenerateContentResponse` of one candidate with `parts`, finished when `finishReason` is given. */
function response(id: string, parts: object[], finishReason?: string, outputTokens = 0): object {
  const candidate = { content: { role: 'model', parts }, index: 0, ...(finishReason === undefined ? {} : { finishReason }) };
  const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: outputTokens, totalTokenCount: 10 + outputTokens };
  return { candidates: [candidate], usageMetadata, modelVersion: MODEL_VERSION, responseId: `fake-${id}` };
}

function format(id: string): ReplyFormat {
  return {
    head: () => [],
    delta: (text) => [{ data: response(id, [{ text }]) }],
    tail: (_text, words) => [{ data: response(id, [{ text: '' }], 'STOP', words) }],
    call: (call) => [
      { data: response(id, [{ functionCall: { id: call.callId, name: call.tool.name, args: call.arguments } }], 'STOP', 5) },
    ],
  };
}

/** What the path asks of a model: `streamGenerateContent`, `generateContent`, `countTokens`, or '' for anything else. */
function actionOf(url: string | undefined): string {
  return /^\/v1(?:beta|alpha)?\/models\/[^/:]+:(\w+)/.exec((url ?? '').split('?')[0]!)?.[1] ?? '';
}

/** The parts of every content of a request, in order. */
function partsOf(body: unknown): { text?: unknown; functionResponse?: { id?: unknown; name?: unknown; response?: unknown } }[] {
  const contents = bodyOf(body).contents;
  return Array.isArray(contents)
    ? contents.flatMap((content: { parts?: unknown }) => (Array.isArray(content?.parts) ? content.parts : []))
    : [];
}

/** The Gemini API. */
const GEMINI_API: FakeApi = {
  baseUrl: (port) => `http://127.0.0.1:${port}`,
  callIdPrefix: 'gemini_call_',
  kindOf: (request, _body) => {
    if (request.method !== 'POST') return 'other';
    const action = actionOf(request.url);
    return action === 'streamGenerateContent' ? 'stream' : action === 'generateContent' ? 'whole' : 'other';
  },
  answerOther: (request, response) => {
    if (request.method === 'POST' && actionOf(request.url) === 'countTokens') return sendJson(response, 200, { totalTokens: 10 });
    sendJson(response, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
  },
  tools: (body): OfferedTool[] => {
    const tools = bodyOf(body).tools;
    if (!Array.isArray(tools)) return [];
    return tools.flatMap((tool: { functionDeclarations?: unknown }) =>
      (Array.isArray(tool?.functionDeclarations) ? tool.functionDeclarations : [])
        .filter((declaration: { name?: unknown }) => typeof declaration?.name === 'string')
        .map((declaration: { name: string }) => ({ qualifiedName: declaration.name, name: declaration.name })),
    );
  },
  results: (body): CarriedResult[] =>
    partsOf(body).flatMap((part) => {
      const result = part.functionResponse;
      if (typeof result?.id !== 'string') return [];
      return [{ callId: result.id, output: result.response, text: resultText(JSON.stringify(result.response ?? null)) }];
    }),
  lastUserText: (body) => {
    const parts = lastWithRole(bodyOf(body).contents, 'user')?.parts;
    return Array.isArray(parts) ? parts.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('') : '';
  },
  format,
  whole: (id, _body, text) => response(id, [{ text }], 'STOP', text.split(' ').length),
};

/** Starts a fake Gemini API server on 127.0.0.1 (a free port). */
export function startFakeGeminiServer(reply?: string): Promise<FakeGeminiServer> {
  return startFakeApi(GEMINI_API, reply);
}
