/**
 * @agentclientprotocol/sdk 2.4 under test: its public `agent()`/`client()` apps over
 * `ndJsonStream` (NDJSON on web streams wrapping the Node streams). Extension methods are
 * registered with an identity params parser; the agent registers no `initialize`, so its
 * initialization gate is off.
 *
 * @packageDocumentation
 */
import { Readable, Writable } from 'node:stream';
import { agent, client as clientApp, ndJsonStream, type Stream } from '@agentclientprotocol/sdk';
import { COUNT, ECHO, HOLD, NOTE, RELEASE, STATS, ServerState, WAIT } from '../protocol';
import { codeOf, type BenchClient, type BenchServer, type Library } from './types';

function ignore(): void {}

function identity(params: unknown): unknown {
  return params;
}

function streamOf(input: Readable, output: Writable) {
  return ndJsonStream(Writable.toWeb(output) as WritableStream<Uint8Array>, Readable.toWeb(input) as ReadableStream<Uint8Array>);
}

function client(input: Readable, output: Writable): BenchClient {
  return sdkClient(streamOf(input, output));
}

/** The SDK client over any SDK stream (NDJSON here, its WebSocket stream in the WebSocket bench). @internal */
export function sdkClient(stream: Stream): BenchClient {
  const connection = clientApp().connect(stream);
  const peer = connection.agent;
  return {
    request: (method, params) => peer.request(method, params),
    notify: (method, params) => void peer.notify(method, params).catch(ignore),
    startCancellable(method, params) {
      const controller = new AbortController();
      const settled = codeOf(peer.request(method, params, { cancellationSignal: controller.signal }));
      return { settled, cancel: () => controller.abort() };
    },
    close: async () => connection.close(),
  };
}

function waitForCancel(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

function serve(input: Readable, output: Writable): BenchServer {
  return sdkServe(streamOf(input, output));
}

/** The SDK agent serving the bench protocol over any SDK stream. @internal */
export function sdkServe(stream: Stream): BenchServer {
  const state = new ServerState();
  const app = agent()
    .onRequest(ECHO, identity, ({ params }) => params ?? null)
    .onNotification(NOTE, identity, () => state.note())
    .onRequest(COUNT, identity, () => state.takeCount())
    .onRequest(WAIT, identity, ({ signal }) => waitForCancel(signal))
    .onRequest(HOLD, identity, () => new Promise<null>((resolve) => state.hold(() => resolve(null))))
    .onNotification(RELEASE, identity, () => state.releaseAll())
    .onRequest(STATS, identity, ({ params }) => state.stats(params));
  const connection = app.connect(stream);
  return { close: async () => connection.close() };
}

/** @agentclientprotocol/sdk. */
export const acpSdk: Library = { name: 'acp-sdk', client, serve };
