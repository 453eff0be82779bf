/**
 * A fake model API from its description: which requests are turns, what a request offers and
 * carries, and the events of its answers. {@link startFakeApi} gives every API the same behaviour:
 * each turn streams the reply one word per delta (or `echo: ` and the prompt, for a prompt holding
 * `[echo]`), a prompt holding `[hold]` is held open after its first word (not in a helper request,
 * {@link FakeApi.isHelper}), and a scripted tool call is made and its result answered
 * (tool-call-script.ts).
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type FakeModelBackend, HOLD_MARKER, replyWords, startFakeModelHost } from './host';
import { type ReplyFormat, SseStream, StreamedReply, sendJson } from './sse';
import { type CarriedResult, type OfferedTool, ToolCallScripts } from './tool-call-script';

/** What a request to a fake API is. */
export type RequestKind = 'stream' | 'whole' | 'other';

/** One model API, as a fake serves it. */
export interface FakeApi {
  /** The base URL the agent is pointed at. */
  baseUrl(port: number): string;
  /** The first letters of the ids of its tool calls (`call_`, `toolu_`). */
  readonly callIdPrefix: string;
  /** Whether a request is a streamed turn, a turn answered whole, or something else (answered by {@link FakeApi.answerOther}). */
  kindOf(request: IncomingMessage, body: unknown): RequestKind;
  /** Answers a request that is not a turn (a reachability check, a token count, a model list; else 404). */
  answerOther(request: IncomingMessage, response: ServerResponse, body: unknown): void;
  /** The tools a request offers. */
  tools(body: unknown): OfferedTool[];
  /** The tool results a request carries. */
  results(body: unknown): CarriedResult[];
  /** The text of the request's last user message. */
  lastUserText(body: unknown): string;
  /**
   * Whether a streamed request is one the agent makes for itself rather than a turn (a session
   * title that quotes the prompt): answered whole even when its prompt holds `[hold]`. Default: none is.
   */
  isHelper?(body: unknown): boolean;
  /** The events of the streamed answer `id` to a request. */
  format(id: string, body: unknown): ReplyFormat;
  /** The answer `id` to a request answered whole, carrying `text`. */
  whole(id: string, body: unknown, text: string): unknown;
}

/** Starts a fake of `api` on 127.0.0.1 (a free port) whose turns answer `reply`. */
export async function startFakeApi(api: FakeApi, reply = 'Hello from the fake model.'): Promise<FakeModelBackend> {
  const scripts = new ToolCallScripts(api.callIdPrefix);
  let turns = 0;
  const host = await startFakeModelHost((request, response, body, hold) => {
    const kind = api.kindOf(request, body);
    if (kind === 'other') return api.answerOther(request, response, body);
    const id = String(++turns);
    const text = api.lastUserText(body);
    if (kind === 'whole') return sendJson(response, 200, api.whole(id, body, replyWords(reply, text).join('')));
    const format = api.format(id, body);
    const stream = new SseStream(response);
    const scripted = scripts.answer(api.tools(body), api.results(body));
    if (scripted?.kind === 'call') return stream.send(format.call(scripted.call)).end();
    const words = scripted?.kind === 'text' ? scripted.text.split(/(?= )/) : replyWords(reply, text);
    const turn = new StreamedReply(stream, format, words);
    if (scripted || !text.includes(HOLD_MARKER) || api.isHelper?.(body)) return turn.finish();
    turn.start();
    hold({ disconnected: stream.disconnected, finish: () => turn.finish() });
  });
  return {
    baseUrl: api.baseUrl(host.port),
    reply,
    requests: host.requests,
    nextHeldTurn: () => host.nextHeldTurn(),
    finishHeldTurns: () => host.finishHeldTurns(),
    callTool: (script) => scripts.start(script),
    toolErrors: scripts.errors,
    close: () => host.close(),
  };
}

/** The text of a message's content: a string, or the `text` of its parts (`textOf` reads one part) joined. */
export function contentText(content: unknown, textOf: (part: unknown) => string = partText): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map(textOf).join('') : '';
}

/** The `text` of a content part, or ''. */
export function partText(part: unknown): string {
  const text = (part as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : '';
}

/** The members of a request body as an object (empty when the body is not one). */
export function bodyOf(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/** The last of `items` whose `role` is `role`, or undefined. */
export function lastWithRole(items: unknown, role: string): Record<string, unknown> | undefined {
  if (!Array.isArray(items)) return undefined;
  return items.filter((item: { role?: unknown } | null) => item?.role === role).at(-1) as Record<string, unknown> | undefined;
}
