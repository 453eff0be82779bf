/**
 * The no-library baseline: `JSON.stringify` + `write()` per message, split on `\n` +
 * `JSON.parse` on the way in. No validation, no backpressure, no batching: the least any
 * NDJSON JSON-RPC peer must do. A request held until cancelled gets an `AbortController`, whose
 * abort listener answers `-32800`: the least a server whose handlers can be stopped must do.
 *
 * @packageDocumentation
 */
import type { Readable, Writable } from 'node:stream';
import { COUNT, ECHO, HOLD, NOTE, RELEASE, REQUEST_CANCELLED, STATS, ServerState, WAIT } from '../protocol';
import type { BenchClient, BenchServer, Library } from './types';

const CANCEL = '$/cancel_request';
/** The reason a held request's signal aborts with: the peer's `-32800`. */
const CANCELLED_REASON = Object.freeze({ code: REQUEST_CANCELLED, message: 'Request cancelled' });

/** A JSON-RPC message as the raw peers look at it. @internal */
export interface Wire {
  jsonrpc: '2.0';
  id?: number;
  method?: string;
  params?: { requestId?: number };
  result?: unknown;
  error?: { code: number; message: string };
}

/** Calls `onMessage` with each parsed line of `input`. */
function readLines(input: Readable, onMessage: (message: Wire) => void): void {
  let rest = '';
  input.setEncoding('utf8');
  input.on('data', (chunk: string) => {
    let nl = chunk.indexOf('\n');
    if (nl === -1) {
      rest += chunk;
      return;
    }
    onMessage(JSON.parse(rest + chunk.slice(0, nl)) as Wire);
    let start = nl + 1;
    while ((nl = chunk.indexOf('\n', start)) !== -1) {
      onMessage(JSON.parse(chunk.slice(start, nl)) as Wire);
      start = nl + 1;
    }
    rest = chunk.slice(start);
  });
}

function send(output: Writable, message: unknown): void {
  output.write(`${JSON.stringify(message)}\n`);
}

/**
 * The raw client over any message channel: `send` writes one message, the returned function takes
 * each message received. @internal (also used by the WebSocket baseline)
 */
export function rawClient(
  send: (message: unknown) => void,
  close: () => Promise<void>,
): { client: BenchClient; receive: (message: Wire) => void } {
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void }>();
  let nextId = 1;
  const receive = (message: Wire): void => {
    const waiter = pending.get(message.id!);
    if (!waiter) return;
    pending.delete(message.id!);
    if (message.error) waiter.reject(message.error);
    else waiter.resolve(message.result);
  };
  const request = (method: string, params?: unknown): Promise<unknown> => {
    const id = nextId++;
    // Register first: an in-process peer may answer during write().
    const answer = new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    send({ jsonrpc: '2.0', id, method, params });
    return answer;
  };
  const client: BenchClient = {
    request,
    notify: (method, params) => send({ jsonrpc: '2.0', method, params }),
    startCancellable(method, params) {
      const id = nextId;
      const settled = request(method, params).then(
        () => 0,
        (error: { code: number }) => error.code,
      );
      return { settled, cancel: () => send({ jsonrpc: '2.0', method: CANCEL, params: { requestId: id } }) };
    },
    close,
  };
  return { client, receive };
}

function client(input: Readable, output: Writable): BenchClient {
  const { client: bench, receive } = rawClient(
    (message) => send(output, message),
    async () => void output.end(),
  );
  readLines(input, receive);
  return bench;
}

/** The raw server over any message channel: returns the function that takes each message received. @internal */
export function rawServer(sendMessage: (message: unknown) => void): (message: Wire) => void {
  const state = new ServerState();
  // A held request's handler learns of its cancel through an AbortSignal, as a Node server that lets
  // handlers stop does (and as acp-wire's and the ACP SDK's servers here do): the cancel workload
  // then compares the same exchange, not a library's signal with a Set lookup.
  const waiting = new Map<number, AbortController>();
  const reply = (id: number, result: unknown): void => sendMessage({ jsonrpc: '2.0', id, result });
  return (message) => {
    const id = message.id!;
    switch (message.method) {
      case ECHO:
        return reply(id, message.params ?? null);
      case NOTE:
        return state.note();
      case COUNT:
        return reply(id, state.takeCount());
      case WAIT: {
        const controller = new AbortController();
        controller.signal.addEventListener(
          'abort',
          () => sendMessage({ jsonrpc: '2.0', id, error: { code: REQUEST_CANCELLED, message: 'Request cancelled' } }),
          { once: true },
        );
        return void waiting.set(id, controller);
      }
      case CANCEL: {
        const target = message.params!.requestId!;
        const controller = waiting.get(target);
        if (!controller) return;
        waiting.delete(target);
        // A reason of its own: abort() without one builds a DOMException, stack trace included.
        return controller.abort(CANCELLED_REASON);
      }
      case HOLD:
        return state.hold(() => reply(id, null));
      case RELEASE:
        return state.releaseAll();
      case STATS:
        return void state.stats(message.params).then((stats) => reply(id, stats));
    }
  };
}

function serve(input: Readable, output: Writable): BenchServer {
  readLines(
    input,
    rawServer((message) => send(output, message)),
  );
  return { close: async () => void output.end() };
}

/** The raw NDJSON baseline. */
export const raw: Library = { name: 'raw', client, serve };
