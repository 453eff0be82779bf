/**
 * The two implementations of the outside side-by-side benchmark's workload
 * (`bench/independent.ts`): acp-wire as that harness configures it (two default `Connection`s)
 * and its raw NDJSON baseline, each as a client and a server over any pair of byte streams.
 *
 * @packageDocumentation
 */
import type { Readable, Writable } from 'node:stream';
import { Connection } from '../lib';

/** The echo request: its params come back as its result. */
export const ECHO = '_bench/echo';
/** The notification the server counts. */
export const NOTE = '_bench/note';
/** Answers how many notifications arrived so far. */
export const COUNT = '_bench/count';
/** Answers the server process's CPU time so far, in µs (user + system). */
export const CPU = '_bench/cpu';

/**
 * The implementations compared: `acp-wire@DIR` is acp-wire from another build (`DIR/lib`, e.g. a
 * copy of `dist` made before a change), run the same way.
 */
export type ImplName = 'acp-wire' | 'raw' | `acp-wire@${string}`;

type ConnectionClass = typeof Connection;

/** The `Connection` class of `impl`: this build's, or the one of the build it names. */
function connectionOf(impl: ImplName): ConnectionClass {
  if (impl === 'acp-wire') return Connection;
  return (require(`${impl.slice('acp-wire@'.length)}/lib`) as { Connection: ConnectionClass }).Connection;
}

/** A client of either implementation. */
export interface Caller {
  request(method: string, params?: unknown): Promise<unknown>;
  notify(method: string, params?: unknown): void;
}

function cpuMicros(): number {
  const used = process.cpuUsage();
  return used.user + used.system;
}

function acpWireServer(input: Readable, output: Writable, Connection: ConnectionClass): void {
  const server = new Connection(input, output);
  let notes = 0;
  server.onRequest(ECHO, (params) => params);
  server.onNotification(NOTE, () => {
    notes++;
  });
  server.onRequest(COUNT, () => notes);
  server.onRequest(CPU, () => cpuMicros());
}

function acpWireClient(input: Readable, output: Writable, Connection: ConnectionClass): Caller {
  const client = new Connection(input, output);
  return {
    request: (method, params) => client.sendRequest(method, params) as unknown as Promise<unknown>,
    notify: (method, params) => client.sendNotification(method, params),
  };
}

interface RawMessage {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}

/** Reads NDJSON as the outside raw baseline does: Buffer chunks, a scan per chunk, one concat per line. */
function onLines(input: Readable, onMessage: (message: RawMessage) => void): void {
  let pending: Buffer[] = [];
  input.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      pending.push(chunk.subarray(start, end));
      onMessage(JSON.parse(Buffer.concat(pending).toString()) as RawMessage);
      pending = [];
      start = end + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  });
}

function rawServer(input: Readable, output: Writable): void {
  let notes = 0;
  const reply = (id: number, result: unknown): void => void output.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);
  onLines(input, (message) => {
    if (message.method === NOTE) notes++;
    else if (message.method === ECHO) reply(message.id!, message.params);
    else if (message.method === COUNT) reply(message.id!, notes);
    else if (message.method === CPU) reply(message.id!, cpuMicros());
  });
}

function rawClient(input: Readable, output: Writable): Caller {
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  onLines(input, (message) => {
    const entry = waiting.get(message.id!);
    waiting.delete(message.id!);
    if (message.error) entry?.reject(message.error);
    else entry?.resolve(message.result);
  });
  let nextId = 0;
  return {
    request: (method, params) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        output.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      }),
    notify: (method, params) => void output.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`),
  };
}

/** Serves the workload's methods with `impl` over `input`/`output`. */
export function serve(impl: ImplName, input: Readable, output: Writable): void {
  if (impl === 'raw') rawServer(input, output);
  else acpWireServer(input, output, connectionOf(impl));
}

/** A client of `impl` over `input`/`output`. */
export function connectClient(impl: ImplName, input: Readable, output: Writable): Caller {
  return impl === 'raw' ? rawClient(input, output) : acpWireClient(input, output, connectionOf(impl));
}

// `node dist/bench/independent-peers.js <impl>`: the server of the stdio transport.
if (require.main === module) serve(process.argv[2] as ImplName, process.stdin, process.stdout);
