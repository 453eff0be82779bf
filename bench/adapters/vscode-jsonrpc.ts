/**
 * vscode-jsonrpc 10 under test: `createMessageConnection` with stream reader/writer
 * (Content-Length framing on the same transports).
 *
 * @packageDocumentation
 */
import type { Readable, Writable } from 'node:stream';
import {
  CancellationTokenSource,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from 'vscode-jsonrpc/node';
import { COUNT, ECHO, HOLD, NOTE, RELEASE, REQUEST_CANCELLED, STATS, ServerState, WAIT } from '../protocol';
import { codeOf, type BenchClient, type BenchServer, type Library } from './types';

function ignore(): void {}

function connect(input: Readable, output: Writable) {
  const connection = createMessageConnection(new StreamMessageReader(input), new StreamMessageWriter(output));
  // Closing the streams under a live connection is expected at the end of a run.
  connection.onError(ignore);
  return connection;
}

function client(input: Readable, output: Writable): BenchClient {
  const connection = connect(input, output);
  connection.listen();
  return {
    request: (method, params) => connection.sendRequest(method, params),
    notify: (method, params) => void connection.sendNotification(method, params).catch(ignore),
    startCancellable(method, params) {
      const source = new CancellationTokenSource();
      const settled = codeOf(connection.sendRequest(method, params, source.token));
      return { settled, cancel: () => source.cancel() };
    },
    close: async () => connection.dispose(),
  };
}

function serve(input: Readable, output: Writable): BenchServer {
  const state = new ServerState();
  const connection = connect(input, output);
  connection.onRequest(ECHO, (params: unknown) => params ?? null);
  connection.onNotification(NOTE, () => state.note());
  connection.onRequest(COUNT, () => state.takeCount());
  connection.onRequest(WAIT, (_params: unknown, token) => {
    return new Promise((_resolve, reject) => {
      token.onCancellationRequested(() => reject(new ResponseError(REQUEST_CANCELLED, 'Request cancelled')));
    });
  });
  connection.onRequest(HOLD, () => new Promise<null>((resolve) => state.hold(() => resolve(null))));
  connection.onNotification(RELEASE, () => state.releaseAll());
  connection.onRequest(STATS, (params: unknown) => state.stats(params));
  connection.listen();
  return { close: async () => connection.dispose() };
}

/** vscode-jsonrpc. */
export const vscodeJsonrpc: Library = { name: 'vscode-jsonrpc', client, serve };
