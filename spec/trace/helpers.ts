/**
 * Helpers of the trace specs, on the toolkit (spec/helpers): the peers as conductor commands, a
 * traced chain driven from an in-memory client connection (and a mocha hook that owns one), and the
 * trace-event schema validator.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { Conductor, createConnectionPair, type ComponentSource, type Connection, type ConductorOptions } from '../../lib';
import { TRACE_EVENT_SCHEMA, type TraceEvent } from '../../lib/trace';
import { CONFORMANCE_AGENT, PASSTHROUGH_PROXY, ensureBuilt } from '../helpers/processes';

export { CLIENT_INIT } from '../helpers/conformance-agent';
export { CLI, ROOT, ensureBuilt } from '../helpers/processes';

/** The conformance agent and the passthrough proxy as conductor commands. */
export const AGENT_COMMAND = `node ${CONFORMANCE_AGENT}`;
export const PASSTHROUGH_COMMAND = `node ${PASSTHROUGH_PROXY}`;

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

/** What {@link useTracedChains} gives a spec: a temporary directory and the chain it started. */
export interface TracedChainSlot {
  /** This test's temporary directory (removed after the test). */
  readonly dir: string;
  /** Starts a traced chain that is closed after the test. */
  start(components: readonly ComponentSource[], options?: Partial<ConductorOptions>): TracedChain;
}

/** Mocha hooks for a `describe` whose tests each start a traced chain in a temporary directory. */
export function useTracedChains(): TracedChainSlot {
  let dir: ReturnType<typeof tempDir> | undefined;
  let chain: TracedChain | undefined;
  before(() => ensureBuilt());
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await chain?.close();
    chain = undefined;
    dir?.remove();
  });
  return {
    get dir(): string {
      return dir!.path;
    },
    start(components, options = {}) {
      chain = startTracedChain(components, options);
      return chain;
    },
  };
}
