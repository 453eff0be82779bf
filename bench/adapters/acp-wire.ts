/**
 * acp-wire under test: one {@link Connection} per side.
 *
 * @packageDocumentation
 */
import type { Readable, Writable } from 'node:stream';
import { Connection } from '../../lib';
// Internal, not exported by the package: the bench measures what the trackers cost.
import { setFinalizationTracking } from '../../lib/gc/responder-tracker';
import { COUNT, ECHO, HOLD, NOTE, RELEASE, STATS, ServerState, WAIT } from '../protocol';
import { codeOf, type BenchClient, type BenchServer, type Library } from './types';

// The runner's no-tracker variant (see NO_TRACKER_ENV in side-by-side.ts; not imported from
// there so that the servers load no runner code).
if (process.env.BENCH_ACP_WIRE_NO_TRACKER === '1') setFinalizationTracking(false);

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
