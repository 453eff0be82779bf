/**
 * HAProxy in front of `acp-wire serve` instances, on 127.0.0.1: the haproxy.cfg of docs/deploy.md
 * (the one the documentation shows, with the test's free ports and a faster health check), run in
 * the foreground as a child of the test, and `serve` instances running the conformance agent.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { LineReader } from '../helpers/lines';
import { childProcesses, isRunning } from '../helpers/process-table';
import { CLI, CONFORMANCE_AGENT, ROOT, spawnScript, type Exit, type SpawnedProcess } from '../helpers/processes';

/** Debian's HAProxy (`.ci/run` installs it). */
export const HAPROXY = '/usr/sbin/haproxy';
/** The deployment guide whose haproxy.cfg the specs run. */
export const DEPLOY_GUIDE = join(ROOT, 'docs', 'deploy.md');
/** The conformance agent command every `serve` runs. */
export const AGENT = `${process.execPath} ${CONFORMANCE_AGENT}`;
/** The backend's name in the guide's haproxy.cfg (HAProxy's log lines name servers `serve/a`). */
export const BACKEND = 'serve';

/** The haproxy.cfg fenced block of docs/deploy.md, exactly as documented. */
export function documentedConfig(): string {
  const guide = readFileSync(DEPLOY_GUIDE, 'utf8');
  const blocks = [...guide.matchAll(/^```haproxy\n([\s\S]*?)^```$/gm)];
  if (blocks.length !== 1) throw new Error(`docs/deploy.md must hold exactly one haproxy block, found ${blocks.length}`);
  return blocks[0]![1]!;
}

/** Where the balancer listens and the ports of its two servers `a` and `b`. */
export interface BalancerPorts {
  frontend: number;
  a: number;
  b: number;
}

/**
 * The documented haproxy.cfg with only these changes: the three addresses (free ports instead of
 * 4100, 4101, 4102) and the health check interval.
 *
 * @throws Error when the documented config no longer has exactly one of each replaced text: the
 * guide and the specs must not drift apart.
 */
export function balancerConfig(ports: BalancerPorts, checkInterval: string): string {
  let config = documentedConfig();
  const replace = (from: string, to: string): void => {
    const count = config.split(from).length - 1;
    if (count !== 1) throw new Error(`docs/deploy.md's haproxy.cfg must contain ${JSON.stringify(from)} once, found ${count}`);
    config = config.replace(from, to);
  };
  replace('bind 127.0.0.1:4100\n', `bind 127.0.0.1:${ports.frontend}\n`);
  replace('server a 127.0.0.1:4101 check\n', `server a 127.0.0.1:${ports.a} check\n`);
  replace('server b 127.0.0.1:4102 check\n', `server b 127.0.0.1:${ports.b} check\n`);
  replace(' inter 2s ', ` inter ${checkInterval} `);
  return config;
}

/** A free TCP port on 127.0.0.1 (free when asked: HAProxy binds it right after). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A running HAProxy. */
export interface Balancer {
  /** `ws://127.0.0.1:PORT/acp` (the same address takes `http://`). */
  readonly wsUrl: string;
  /** `http://127.0.0.1:PORT/acp`. */
  readonly httpUrl: string;
  /** Its stderr: the server state changes (`Server serve/a is DOWN, reason: …`). */
  readonly stderr: LineReader;
  /**
   * Resolves with the next line of its stderr (not taken by an earlier call) that says server
   * `name` is `UP` or `DOWN`.
   */
  untilServer(name: string, state: 'UP' | 'DOWN'): Promise<string>;
  /** Stops it (SIGTERM, then SIGKILL) and removes its directory; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Starts `haproxy -f <cfg> -db` with the documented config; resolves once it serves. */
export async function startBalancer(servers: { a: number; b: number }, checkInterval = '200ms'): Promise<Balancer> {
  if (!existsSync(HAPROXY)) throw new Error(`${HAPROXY} is missing: apt-get install haproxy (see .ci/run)`);
  const frontend = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'acp-wire-haproxy-'));
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(cfg, balancerConfig({ frontend, ...servers }, checkInterval));
  const child = spawn(HAPROXY, ['-f', cfg, '-db'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const stderr = new LineReader(child.stderr!, { label: 'haproxy stderr' });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const balancer: Balancer = {
    wsUrl: `ws://127.0.0.1:${frontend}/acp`,
    httpUrl: `http://127.0.0.1:${frontend}/acp`,
    stderr,
    untilServer: (name, state) => stderr.take((_message, line) => line.includes(`Server ${BACKEND}/${name} is ${state}`), 30_000),
    stop,
  };
  try {
    await untilStatus(`http://127.0.0.1:${frontend}/healthz`, 200, () => child.exitCode !== null);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}; haproxy stderr: ${stderr.text}`);
  }
  return balancer;
}

/** A GET's status and body (a connection of its own, closed after). */
export function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { agent: false, headers: { Connection: 'close' } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.once('error', reject);
    request.end();
  });
}

/** Polls `url` until it answers `status` (HAProxy has no "ready" line). */
async function untilStatus(url: string, status: number, hasFailed: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (hasFailed()) throw new Error('haproxy exited');
    const answer = await get(url).catch(() => undefined);
    if (answer?.status === status) return;
    await delay(50);
  }
  throw new Error(`${url} never answered ${status}`);
}

/** A running `acp-wire serve`. */
export interface Serve extends SpawnedProcess {
  /** Its port. */
  readonly port: number;
  /** Its `/healthz`. */
  readonly healthUrl: string;
  /** The agents it runs now (one per client). */
  agents(): number[];
}

/** Starts `acp-wire serve --port 0 <args> AGENT` and waits for its `listening` line. */
export async function startServe(args: readonly string[] = []): Promise<Serve> {
  const spawned = spawnScript(CLI, ['serve', '--port', '0', ...args, AGENT]);
  const first = await spawned.stdout.take();
  const match = /^listening ws:\/\/127\.0\.0\.1:(\d+)\/acp$/.exec(first);
  if (!match) throw new Error(`unexpected first line ${JSON.stringify(first)}; stderr: ${spawned.stderr.text}`);
  const port = Number(match[1]);
  const pid = spawned.child.pid!;
  return {
    ...spawned,
    port,
    healthUrl: `http://127.0.0.1:${port}/healthz`,
    agents: () => childProcesses(pid).map((child) => child.pid),
  };
}

/** Waits (polling /proc: another process's children send no event here) until `check` holds. */
export async function until(check: () => boolean, what: string, attempts = 800): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (check()) return;
    await delay(25);
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** SIGKILLs every pid of `pids` still running (agents a SIGKILLed `serve` left behind), and waits for them. */
export async function killLeftovers(pids: readonly number[]): Promise<void> {
  for (const pid of pids) {
    if (!isRunning(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // it ended meanwhile
    }
  }
  await until(() => !pids.some(isRunning), 'the leftover agents have ended');
}

/**
 * Stops each instance still running with SIGTERM (its drain closes idle clients at once), SIGKILL
 * after `graceMs`; then SIGKILLs any agent left behind. Resolves once all have ended.
 */
export async function stopInstances(instances: readonly Serve[], graceMs = 10_000): Promise<void> {
  const agents = instances.flatMap((instance) => instance.agents());
  await Promise.all(
    instances.map(async ({ child, exited }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }),
  );
  await killLeftovers(agents);
}
