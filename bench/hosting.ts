/**
 * What one `acp-wire serve` holds: the memory per idle client connection with the agent hosted in
 * serve's process (`--agent-module`, one instance per client) and with an agent process per client,
 * and how many idle clients one serve process takes. Clients are raw WebSocket clients of this
 * process, each connected and initialized, then idle. Run by the runner as
 * `node dist/bench/hosting.js <moduleClients> <processClients> <maxClients>`.
 *
 * @packageDocumentation
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { HostMemory } from './hosting-server';

const ROOT = join(__dirname, '..', '..');
const CONFORMANCE_AGENT = join(ROOT, 'dist', 'examples', 'conformance-agent.js');
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: 2, info: { name: 'bench-client', version: '1' } },
});
/** How long one client may take to connect and be answered its `initialize`. */
const CONNECT_TIMEOUT_MS = 30_000;
/** Clients connecting at once. */
const BATCH = 50;
/** The capacity run stops when serve's RSS reaches this many bytes. */
const RSS_BUDGET_BYTES = 2 * 2 ** 30;
/** The capacity run stops after this long, wherever it is. */
const CAPACITY_TIME_BUDGET_MS = 180_000;

/** Memory per idle client connection of one way of hosting. */
export interface IdleCost {
  hosting: 'module' | 'process';
  clients: number;
  /** serve's RSS growth per client, in bytes. */
  serveRssEach: number;
  /** serve's heap growth per client after a full collection, in bytes. */
  serveHeapEach: number;
  /** The agent processes' RSS per client (`process` hosting; 0 for `module`), in bytes. */
  agentRssEach: number;
  /** Everything per client: serve's RSS growth plus the agent processes' RSS, in bytes. */
  totalRssEach: number;
}

/** How many idle clients one serve process took, hosting its agents as modules. */
export interface Capacity {
  /** Clients connected and initialized when the run stopped. */
  clients: number;
  /** Why it stopped: the client ceiling, the RSS budget, the time budget, or a client that failed. */
  stoppedBy: 'ceiling' | 'rss budget' | 'time budget' | string;
  /** serve's RSS and heap then, in bytes. */
  rss: number;
  heapUsed: number;
  seconds: number;
}

/** The whole hosting result. */
export interface HostingResult {
  idle: IdleCost[];
  capacity: Capacity | undefined;
}

/** A forked `acp-wire serve`, its URL, and its memory on request. */
interface Serve {
  readonly child: ChildProcess;
  readonly url: string;
  memory(): Promise<HostMemory>;
  stop(): Promise<void>;
}

async function startServe(args: string[]): Promise<Serve> {
  const child = fork(join(__dirname, 'hosting-server.js'), ['serve', '--max-clients', '65535', ...args], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr = (stderr + String(chunk)).slice(-4000)));
  const [first] = (await Promise.race([
    once(child.stdout!, 'data'),
    once(child, 'exit').then(() => Promise.reject(new Error(`serve exited: ${stderr}`))),
  ])) as [Buffer];
  const url = /^listening (\S+)/.exec(String(first))?.[1];
  if (!url) throw new Error(`unexpected serve output ${String(first)}`);
  const exited = once(child, 'exit');
  return {
    child,
    url,
    async memory() {
      child.send('memory');
      const [reply] = (await once(child, 'message')) as [HostMemory];
      return reply;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Connects one WebSocket client and initializes it; resolves with the open socket (rejects after `CONNECT_TIMEOUT_MS`). */
function connectClient(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const fail = (error: Error): void => {
      clearTimeout(timer);
      ws.terminate();
      reject(error);
    };
    const timer = setTimeout(() => fail(new Error(`no initialize answer in ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    ws.once('error', fail);
    ws.once('open', () => ws.send(INITIALIZE));
    ws.once('message', () => {
      clearTimeout(timer);
      ws.removeListener('error', fail);
      ws.on('error', () => {});
      resolve(ws);
    });
  });
}

/** Opens `count` more clients, `BATCH` at a time, into `clients`; rejects with the first failure (the others are kept). */
async function openClients(url: string, count: number, clients: WebSocket[]): Promise<void> {
  for (let opened = 0; opened < count; opened += BATCH) {
    const batch = Math.min(BATCH, count - opened);
    const settled = await Promise.allSettled(Array.from({ length: batch }, () => connectClient(url)));
    for (const outcome of settled) if (outcome.status === 'fulfilled') clients.push(outcome.value);
    const failure = settled.find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;
  }
}

async function closeClients(clients: WebSocket[]): Promise<void> {
  await Promise.all(clients.map((ws) => new Promise((resolve) => (ws.once('close', resolve), ws.terminate()))));
  clients.length = 0;
}

/** RSS of every descendant of `pid` (from /proc), in bytes. */
function descendantsRss(pid: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // It ended while we looked.
    }
  }
  let total = 0;
  const visit = (parent: number): void => {
    for (const child of children.get(parent) ?? []) {
      total += rssOf(child);
      visit(child);
    }
  };
  visit(pid);
  return total;
}

function rssOf(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Memory per idle client of one serve: after a warm-up, `count` clients are opened and measured. */
async function idleCost(hosting: IdleCost['hosting'], count: number): Promise<IdleCost> {
  const args = hosting === 'module' ? ['--agent-module', CONFORMANCE_AGENT] : [`${process.execPath} ${CONFORMANCE_AGENT}`];
  const serve = await startServe(args);
  const clients: WebSocket[] = [];
  try {
    // Warm-up: the code paths of a client's life are loaded and compiled before the baseline.
    await openClients(serve.url, Math.min(count, BATCH), clients);
    await closeClients(clients);
    await waitForNoDescendants(serve.child.pid!);
    const before = await serve.memory();
    await openClients(serve.url, count, clients);
    const after = await serve.memory();
    const agentRss = descendantsRss(serve.child.pid!);
    const serveRssEach = (after.rss - before.rss) / count;
    return {
      hosting,
      clients: count,
      serveRssEach,
      serveHeapEach: (after.heapUsed - before.heapUsed) / count,
      agentRssEach: agentRss / count,
      totalRssEach: serveRssEach + agentRss / count,
    };
  } finally {
    await closeClients(clients);
    await serve.stop();
  }
}

async function waitForNoDescendants(pid: number): Promise<void> {
  for (let attempt = 0; attempt < 200 && descendantsRss(pid) > 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Opens idle clients on one module-hosting serve until `ceiling`, the RSS budget or the time budget. */
async function capacity(ceiling: number): Promise<Capacity> {
  const serve = await startServe(['--agent-module', CONFORMANCE_AGENT]);
  const clients: WebSocket[] = [];
  const started = performance.now();
  let stoppedBy: Capacity['stoppedBy'] = 'ceiling';
  try {
    while (clients.length < ceiling) {
      if (performance.now() - started > CAPACITY_TIME_BUDGET_MS) {
        stoppedBy = 'time budget';
        break;
      }
      if (rssOf(serve.child.pid!) >= RSS_BUDGET_BYTES) {
        stoppedBy = 'rss budget';
        break;
      }
      try {
        await openClients(serve.url, Math.min(BATCH * 10, ceiling - clients.length), clients);
      } catch (error) {
        stoppedBy = `a client failed: ${(error as Error).message}`;
        break;
      }
    }
    const seconds = (performance.now() - started) / 1000;
    const memory = await serve.memory();
    return { clients: clients.length, stoppedBy, rss: memory.rss, heapUsed: memory.heapUsed, seconds };
  } finally {
    await closeClients(clients);
    await serve.stop();
  }
}

async function main(): Promise<void> {
  const [moduleClients, processClients, ceiling] = process.argv.slice(2).map(Number) as [number, number, number];
  const idle: IdleCost[] = [];
  if (moduleClients > 0) idle.push(await idleCost('module', moduleClients));
  if (processClients > 0) idle.push(await idleCost('process', processClients));
  const result: HostingResult = { idle, capacity: ceiling > 0 ? await capacity(ceiling) : undefined };
  process.send!(result);
  process.disconnect();
}

void main();
