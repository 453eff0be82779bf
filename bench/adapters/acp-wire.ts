/**
 * acp-wire under test: one {@link Connection} per side.
 *
 * @packageDocumentation
 */
import type { Readable, Writable } from 'node:stream';
import { Connection } from '../../lib';
import { COUNT, ECHO, HOLD, NOTE, RELEASE, STATS, ServerState, WAIT } from '../protocol';
import { codeOf, type BenchClient, type BenchServer, type Library } from './types';

function client(input: Readable, output: Writable): BenchClient {
  const connection = new Connection(input, output);
  return {
    request: (method, params) => connection.sendRequest(method, params),
    notify: (method, params) => connection.sendNotification(method, params),
    startCancellable(method, params) {
      const sent = connection.sendRequest(method, params);
      return { settled: codeOf(sent), cancel: () => void sent.cancel() };
    },
    close: () => connection.close(),
  };
}

function serve(input: Readable, output: Writable): BenchServer {
  const state = new ServerState();
  const connection = new Connection(input, output);
  connection.onRequest(ECHO, (params: unknown) => params ?? null);
  connection.onNotification(NOTE, () => state.note());
  connection.onRequest(COUNT, () => state.takeCount());
  connection.onRequest(WAIT, (_params, responder) => {
    responder.signal.addEventListener('abort', () => responder.respondCancelled(), { once: true });
  });
  connection.onRequest(HOLD, (_params, responder) => {
    state.hold(() => responder.respond(null));
  });
  connection.onNotification(RELEASE, () => state.releaseAll());
  connection.onRequest(STATS, (params: unknown) => state.stats(params));
  return { close: () => connection.close() };
}

/** acp-wire, as shipped. */
export const acpWire: Library = { name: 'acp-wire', client, serve };
