/**
 * Revision 2026-07-28's `input_required` results carried to a 2025-revision client: each embedded
 * request (`elicitation/create`, `sampling/createMessage`, `roots/list`) goes to the client as the
 * server→client request of its revision, on the event stream of the POST that asked; the client's
 * answers become the retry's `inputResponses`.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';
import type { McpHttpReply } from './reply';
import { requestKey, type McpSession } from './sessions';

/** The requests an `input_required` result may embed, which a 2025-revision client answers as server→client requests. */
export const MCP_INPUT_REQUEST_METHODS: readonly string[] = Object.freeze(['elicitation/create', 'sampling/createMessage', 'roots/list']);

/** How many `input_required` rounds one request may take before the bridge gives up on it. */
export const MAX_INPUT_ROUNDS = 8;

/** What an `input_required` result asks of the client. */
export interface InputRequired {
  /** The embedded requests, by the server's key. */
  readonly inputRequests: Readonly<Record<string, JsonValue>>;
  /** The server's opaque state, echoed on the retry when present. */
  readonly requestState: string | undefined;
}

/** Why an `input_required` result could not be carried: the request is answered with this MCP error. @internal */
export class InputRoundFailure extends Error {
  /** Always `'InputRoundFailure'`. */
  override readonly name = 'InputRoundFailure';
  /** The MCP error's `data`. */
  readonly data: JsonObject;

  /**
   * @param message - what went wrong, for the MCP client's log
   * @param data - the input request concerned (`inputRequest`, `method`) and the client's error, if any
   */
  constructor(message: string, data: JsonObject) {
    super(message);
    this.data = data;
  }
}

/** The `input_required` part of a result, or `undefined` for a result of any other kind. */
export function inputRequiredOf(result: JsonValue): InputRequired | undefined {
  if (!isJsonObject(result) || result.resultType !== 'input_required') return undefined;
  return {
    inputRequests: isJsonObject(result.inputRequests) ? result.inputRequests : {},
    requestState: typeof result.requestState === 'string' ? result.requestState : undefined,
  };
}

/** The retry of a request: its first params with the client's answers and the server's state. */
export function retryParams(params: JsonObject | undefined, input: InputRequired, inputResponses: JsonObject): JsonObject {
  const retry: JsonObject = { ...params, inputResponses };
  if (input.requestState !== undefined) retry.requestState = input.requestState;
  else delete retry.requestState;
  return retry;
}

/** Where the bridge asks: the POST's answer (its event stream) and the session the client answers in. */
export interface InputChannel {
  readonly reply: McpHttpReply;
  readonly session: McpSession;
}

/**
 * Sends each embedded request to the client on the POST's event stream and resolves with the
 * client's results by key (the retry's `inputResponses`).
 *
 * @throws InputRoundFailure (rejects) for a request the bridge cannot carry (another method, or a
 * client that does not take an event stream) and for an answer that is an error
 * @throws the signal's reason (rejects) once `signal` aborts; nothing more is awaited
 */
export async function askClient(input: InputRequired, channel: InputChannel, signal: AbortSignal): Promise<JsonObject> {
  const entries = Object.entries(input.inputRequests).map(([key, request]) => [key, checkedRequest(key, request, channel)] as const);
  // One failed answer ends the round: the requests still awaited are forgotten.
  const round = new AbortController();
  const stop = (): void => round.abort(signal.reason);
  signal.addEventListener('abort', stop, { once: true });
  try {
    const answers = await Promise.all(entries.map(([key, request]) => ask(key, request, channel, round.signal)));
    return Object.fromEntries(entries.map(([key], index) => [key, answers[index]!]));
  } finally {
    signal.removeEventListener('abort', stop);
    round.abort();
  }
}

/** An embedded request the bridge can send; else the failure that says why not. */
function checkedRequest(key: string, request: JsonValue, channel: InputChannel): { method: string; params: JsonValue | undefined } {
  const method = isJsonObject(request) && typeof request.method === 'string' ? request.method : undefined;
  if (method === undefined || !MCP_INPUT_REQUEST_METHODS.includes(method)) {
    throw new InputRoundFailure(
      `the server asked the client for ${method ?? 'a malformed request'} (input "${key}"), which the bridge cannot carry to this client: it carries ${MCP_INPUT_REQUEST_METHODS.join(', ')}`,
      { inputRequest: key, method: method ?? null },
    );
  }
  if (!channel.reply.canSend) {
    throw new InputRoundFailure(
      `the server needs ${method} from the client (input "${key}"), which the bridge sends on the request's event stream: the request did not accept text/event-stream`,
      { inputRequest: key, method },
    );
  }
  return { method, params: (request as JsonObject).params };
}

/** Sends one request to the client and awaits its answer in the session. */
function ask(
  key: string,
  request: { method: string; params: JsonValue | undefined },
  channel: InputChannel,
  signal: AbortSignal,
): Promise<JsonObject> {
  const id = `mcp-bridge-input:${randomUUID()}`;
  const awaited = channel.session.awaitedAnswers;
  return new Promise<JsonObject>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      awaited.delete(requestKey(id));
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    awaited.set(requestKey(id), (answer) => {
      awaited.delete(requestKey(id));
      signal.removeEventListener('abort', onAbort);
      if (isJsonObject(answer.result)) resolve(answer.result);
      else reject(answerFailure(key, request.method, answer.error));
    });
    const message: JsonObject = { jsonrpc: '2.0', id, method: request.method };
    if (request.params !== undefined) message.params = request.params;
    channel.reply.notify(message);
  });
}

function answerFailure(key: string, method: string, error: JsonValue | undefined): InputRoundFailure {
  const reason = isJsonObject(error) && typeof error.message === 'string' ? error.message : 'no result';
  return new InputRoundFailure(`the client answered ${method} (input "${key}") with an error: ${reason}`, {
    inputRequest: key,
    method,
    clientError: error ?? null,
  });
}
