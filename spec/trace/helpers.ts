/**
 * Self-contained helpers of the trace specs: the compiled peers, a traced chain driven from an
 * in-memory client connection, and the trace-event schema validator.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import {
  Conductor,
  TRACE_EVENT_SCHEMA,
  createConnectionPair,
  type ComponentSource,
  type Connection,
  type ConductorOptions,
  type TraceEvent,
} from '../../lib';

/** The repository root. */
export const ROOT = resolve(__dirname, '..', '..');
/** The compiled command line and peers. */
export const CLI = join(ROOT, 'dist', 'bin', 'acp-wire.js');
export const AGENT_COMMAND = `node ${join(ROOT, 'dist', 'examples', 'conformance-agent.js')}`;
export const PASSTHROUGH_COMMAND = `node ${join(ROOT, 'dist', 'examples', 'passthrough-proxy.js')}`;

/** The `initialize` params the trace specs send (ACP v2). */
export const CLIENT_INIT = { protocolVersion: 2, info: { name: 'trace-spec', version: '1.0.0' }, capabilities: {} };

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (/\.(ts|html)$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds (`npx tsc -p .`) when a compiled peer is missing or older than a source. */
export function ensureBuilt(): void {
  const outputs = [CLI, ...[AGENT_COMMAND, PASSTHROUGH_COMMAND].map((command) => command.slice('node '.length))];
  const sources = Math.max(...['lib', 'examples', 'bin'].map((dir) => newestSource(join(ROOT, dir))));
  const isFresh = (): boolean => outputs.every((file) => existsSync(file) && statSync(file).mtimeMs >= sources);
  if (isFresh()) return;
  const result = spawnSync('npx', ['tsc', '-p', '.'], { cwd: ROOT, encoding: 'utf8' });
  if (!isFresh()) throw new Error(`the build did not produce fresh peers:\n${result.stdout}${result.stderr}`);
}

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'acp-wire-trace-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A conductor whose client is an in-memory connection the spec drives. */
export interface TracedChain {
  readonly client: Connection;
  readonly conductor: Conductor;
  /** Every trace event so far (from `onTraceEvent`), in order. */
  readonly events: TraceEvent[];
  /** Resolves with the first event (so far or to come) that matches. */
  waitForEvent(match: (event: TraceEvent) => boolean): Promise<TraceEvent>;
  /** Closes the client and waits for the chain to shut down. */
  close(): Promise<void>;
}

/**
 * Starts a conductor over `components` with the client on an in-memory pair, collecting its trace
 * events. If the conductor throws, the pair is closed and the error rethrown.
 */
export function startTracedChain(components: readonly ComponentSource[], options: Partial<ConductorOptions> = {}): TracedChain {
  const [conductorSide, client] = createConnectionPair();
  const events: TraceEvent[] = [];
  const waiters: { match(event: TraceEvent): boolean; resolve(event: TraceEvent): void }[] = [];
  const onTraceEvent = (event: TraceEvent): void => {
    events.push(event);
    for (const waiter of [...waiters]) {
      if (!waiter.match(event)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(event);
    }
  };
  let conductor: Conductor;
  try {
    conductor = new Conductor({ client: conductorSide, components, stderr: 'ignore', onTraceEvent, ...options });
  } catch (error) {
    void conductorSide.close();
    void client.close();
    throw error;
  }
  return {
    client,
    conductor,
    events,
    waitForEvent: (match) => {
      const found = events.find(match);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ match, resolve }));
    },
    close: async () => {
      await client.close();
      await conductor.closed;
    },
  };
}

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
const validateEvent = ajv.compile(TRACE_EVENT_SCHEMA as object);

/** The schema errors of one event, as text; empty when it is valid. */
export function schemaErrors(event: unknown): string {
  return validateEvent(event) ? '' : ajv.errorsText(validateEvent.errors);
}

/** An event without its `ts`, for comparing with expected events. */
export function withoutTs(event: TraceEvent): Omit<TraceEvent, 'ts'> {
  const { ts: _ts, ...rest } = event;
  return rest;
}
