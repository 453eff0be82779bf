/**
 * The conformance agent: a small ACP agent built only on acp-wire's public API, driven by the
 * project's wire tests and by anyone with raw NDJSON (see "Conformance peers" in the README).
 *
 * Usage: `node dist/examples/conformance-agent.js [--tcp PORT]`. Logs go to stderr
 * (`ACP_WIRE_LOG=trace` adds the wire trace); stdout carries protocol lines only. It is also an
 * agent module: `acp-wire serve --agent-module dist/examples/conformance-agent.js` hosts one
 * instance per client in serve's own process (see {@link createAgent}).
 *
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { connectStdio, createStderrLogger, defaultLogger, listenTcp, type AcpAgent, type Connection } from '../lib';
import type { AgentFactory } from '../lib/hosting';
import { CONFORMANCE_AGENT_NAME, serveConformanceAgent as serve, type ConformanceAgentOptions as ServeOptions } from './conformance/agent';

export { CONFORMANCE_AGENT_NAME };

/** Options of {@link serveConformanceAgent}. */
export interface ConformanceAgentOptions {
  /** The `info.version` answered to `initialize`. Default: acp-wire's package version. */
  version?: string;
}

/**
 * Serves the conformance agent's methods on `connection`, with its own state (initialize gate,
 * sessions, received notifications); everything stops when the connection closes.
 *
 * @remarks It speaks ACP v1 or v2, whichever `initialize` negotiates. The methods and their
 * contract are listed in docs/acp.md and the README ("Conformance peers").
 * @example
 * ```ts
 * const [client, agent] = createConnectionPair();
 * serveConformanceAgent(agent);
 * await client.sendRequest('initialize', { protocolVersion: 2, info: { name: 'me', version: '1' } });
 * ```
 */
export function serveConformanceAgent(connection: Connection, options: ConformanceAgentOptions = {}): void {
  const full: ServeOptions = { version: options.version ?? packageVersion() };
  serve(connection, full);
}

let version: string | undefined;

/**
 * The agent-module factory (see {@link AgentFactory}): one conformance agent per client
 * connection, with its own state, for `acp-wire serve --agent-module`.
 */
export const createAgent: AgentFactory = (connection): AcpAgent => serve(connection, { version: (version ??= packageVersion()) });

/** acp-wire's version, read at run time from the nearest package.json (works from `dist/examples/`). */
function packageVersion(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'acp-wire' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No (readable) package.json here: keep looking upwards.
    }
    if (dirname(dir) === dir) return '0.0.0';
  }
}

/** The `--tcp PORT` (or `--tcp=PORT`) argument, `undefined` for stdio; exits 2 on anything else. */
function parsePort(argv: readonly string[]): number | undefined {
  if (argv.length === 0) return undefined;
  const [flag, value] = argv[0].startsWith('--tcp=') ? ['--tcp', argv[0].slice(6)] : argv;
  const port = Number(value);
  const isValid = flag === '--tcp' && argv.length === (argv[0] === '--tcp' ? 2 : 1) && value !== '' && Number.isInteger(port);
  if (!isValid || port < 0 || port > 65535) {
    process.stderr.write('usage: conformance-agent [--tcp PORT]\n');
    process.exit(2);
  }
  return port;
}

async function main(): Promise<void> {
  const port = parsePort(process.argv.slice(2));
  // Warnings by default (a failing notification handler, bad input); `ACP_WIRE_LOG` overrides.
  const logger = process.env.ACP_WIRE_LOG ? defaultLogger('agent') : createStderrLogger({ name: 'agent' });
  const version = packageVersion();
  if (port === undefined) {
    serveConformanceAgent(connectStdio({ logger, name: 'agent' }), { version });
    return;
  }
  const listener = await listenTcp({ port }, (connection) => serveConformanceAgent(connection, { version }), { logger, name: 'agent' });
  process.stdout.write(`listening ${listener.port}\n`);
  // In TCP mode stdin carries no protocol: its end is the signal to stop.
  process.stdin.on('end', () => void listener.close());
  process.stdin.on('error', () => void listener.close());
  process.stdin.resume();
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`conformance-agent: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
