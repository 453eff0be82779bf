/**
 * The transports a client and its server are joined by: in-process streams, a child process's
 * stdio, TCP on loopback to a child process, and WebSocket on loopback to a child process.
 *
 * @packageDocumentation
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { BenchClient, Library, LibraryName } from './adapters';
import { WEBSOCKET_ADAPTERS } from './adapters/websocket';
import { STATS, type ServerStats } from './protocol';

/** The transports compared. */
export type TransportName = 'in-process' | 'child-stdio' | 'tcp' | 'websocket';

/** Every transport, in table order. */
export const TRANSPORTS: readonly TransportName[] = ['in-process', 'child-stdio', 'tcp', 'websocket'];

/** Whether `library` runs over `transport` (WebSocket: acp-wire, the SDK and the raw baseline). */
export function runsOver(library: LibraryName, transport: TransportName): boolean {
  return transport !== 'websocket' || WEBSOCKET_ADAPTERS[library] !== undefined;
}

/** A connected client and whatever serves it. */
export interface Harness {
  readonly client: BenchClient;
  /** The server process's stats, or `undefined` when the server runs in this process. */
  remoteStats(gc?: boolean): Promise<ServerStats | undefined>;
  /** Closes the client, the server and any process or socket. */
  close(): Promise<void>;
}

/** Options of {@link openHarness}. */
export interface HarnessOptions {
  /** Extra node flags for a server process (e.g. `--expose-gc`). */
  nodeFlags?: string[];
}

/** Connects a client of `library` to a server of the same library over `transport`. */
export async function openHarness(library: Library, transport: TransportName, options: HarnessOptions = {}): Promise<Harness> {
  if (transport === 'in-process') return inProcess(library);
  const child = spawnServer(library, transport, options.nodeFlags ?? []);
  if (transport === 'child-stdio') return remote(library.client(child.stdout!, child.stdin!), child);
  const port = await firstLine(child);
  if (transport === 'websocket') return remote(await WEBSOCKET_ADAPTERS[library.name]!.client(`ws://127.0.0.1:${port}/acp`), child);
  const socket = connect({ host: '127.0.0.1', port: Number(port) });
  socket.setNoDelay(true);
  await once(socket, 'connect');
  return remote(library.client(socket, socket), child, socket);
}

function inProcess(library: Library): Harness {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const server = library.serve(toServer, toClient);
  const client = library.client(toClient, toServer);
  return {
    client,
    remoteStats: async () => undefined,
    async close() {
      await client.close();
      await server.close();
      toServer.destroy();
      toClient.destroy();
    },
  };
}

function spawnServer(library: Library, transport: TransportName, nodeFlags: string[]): ChildProcess {
  const script = join(__dirname, 'servers', `${library.name}.js`);
  const mode = transport === 'child-stdio' ? 'stdio' : transport;
  return spawn(process.execPath, [...nodeFlags, script, mode], { stdio: ['pipe', 'pipe', 'inherit'] });
}

async function firstLine(child: ChildProcess): Promise<string> {
  let text = '';
  for await (const chunk of child.stdout!) {
    text += String(chunk);
    const nl = text.indexOf('\n');
    if (nl !== -1) return text.slice(0, nl);
  }
  throw new Error('bench server exited before printing its port');
}

function remote(client: BenchClient, child: ChildProcess, socket?: Socket): Harness {
  const exited = once(child, 'exit');
  return {
    client,
    remoteStats: async (gc = false) => (await client.request(STATS, { gc })) as ServerStats,
    async close() {
      await client.close();
      socket?.destroy();
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
