/**
 * Proxy chains in specs: the command lines the conductor takes, the conductor process driven with
 * raw NDJSON, predicates over its `--trace` lines, and in-memory hops whose lines can be read.
 */
import { PassThrough } from 'node:stream';
import type { Connection, Logger } from '../../lib';
import { LineReader } from './lines';
import { described, parseMessage, type MessageMatch, type MessagePredicate } from './messages';
import { tappedPair, type TappedPair } from './peers';
import { CLI, CONFORMANCE_AGENT, PASSTHROUGH_PROXY, fixtureArgs, spawnScript, type SpawnedProcess } from './processes';

/** Command lines (as the conductor takes them) of the compiled peers (call `ensureBuilt()` first). */
export const PASSTHROUGH_COMMAND = `node ${PASSTHROUGH_PROXY}`;
export const AGENT_COMMAND = `node ${CONFORMANCE_AGENT}`;

/** The command line of the matrix fixture proxy (spec/fixtures/matrix-proxy.ts) in `mode`. */
export function matrixProxyCommand(mode: string): string {
  return ['node', ...fixtureArgs('matrix-proxy', [mode])].join(' ');
}

/** Spawns `node dist/bin/acp-wire.js conduct <args>` (call `ensureBuilt()` first). */
export function spawnConductor(args: readonly string[], env: NodeJS.ProcessEnv = {}): SpawnedProcess {
  return spawnScript(CLI, ['conduct', ...args], { env });
}

/** A trace line of `--trace` output (`<time> <hop> trace <arrow> <json>`) for one hop and arrow whose message matches. */
export function traceOf(hop: string, arrow: '->' | '<-', match: MessagePredicate): MessageMatch {
  const marker = ` ${hop} trace ${arrow} `;
  return described(`a trace line of ${hop} ${arrow} ${match.name || 'any message'}`, (_: unknown, line: string) => {
    const at = line.indexOf(marker);
    if (at === -1) return false;
    const json = line.slice(at + marker.length);
    return match(parseMessage(json));
  });
}

/** The JSON part of a trace line. */
export function traceJson(line: string): Record<string, unknown> {
  return JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>;
}

/** A logger factory whose trace lines (`- <name> trace -> <json>`) can be awaited like `--trace` output. */
export function traceRecorder(): { logger: (name: string) => Logger; lines: LineReader; stream: PassThrough } {
  const stream = new PassThrough();
  const lines = new LineReader(stream, { label: 'trace' });
  const logger = (name: string): Logger => ({
    traces: true,
    log: (level, message) => void stream.write(`- ${name} ${level} ${message}\n`),
  });
  return { logger, lines, stream };
}

/** Four connections in two hops: client ⇄ proxy (upstream side), proxy (downstream side) ⇄ agent. */
export interface TwoHops {
  readonly client: Connection;
  readonly proxyUp: Connection;
  readonly proxyDown: Connection;
  readonly agent: Connection;
  /** The client ⇄ proxy hop (left: client). */
  readonly up: TappedPair;
  /** The proxy ⇄ agent hop (left: proxy). */
  readonly down: TappedPair;
  close(): Promise<void>;
}

/** Builds {@link TwoHops}; the proxy side is wired by the spec. */
export function twoHops(): TwoHops {
  const up = tappedPair();
  const down = tappedPair();
  return {
    client: up.left,
    proxyUp: up.right,
    proxyDown: down.left,
    agent: down.right,
    up,
    down,
    close: async () => void (await Promise.all([up.close(), down.close()])),
  };
}
