/**
 * `acp-wire serve [options] "<agent command>"`: exposes a stdio agent over WebSocket and
 * Streamable HTTP, one agent process per client connection; or, with `--agent-module FILE`, one
 * agent instance per client connection in its own process.
 *
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { createSecureContext } from 'node:tls';
import { splitCommandLine } from '../chain/command-line';
import { createStderrLogger, defaultLogger, type Logger } from '../support/logger';
import { spawnProcessTree, type ProcessTree } from '../transports/process-tree';
import { DEFAULT_HTTP_IDLE_TIMEOUT_MS } from '../transports/remote/http/http-idle';
import { DEFAULT_HOST, isLoopbackHost } from '../server/loopback';
import { DEFAULT_PATH, checkPath } from '../transports/remote/limits';
import { LineWorkTracker } from '../server/work-probe';
import {
  DEFAULT_RESUME_BUFFER_MESSAGES,
  DEFAULT_RESUME_BUFFER_MS,
  DEFAULT_RESUME_GRACE_MS,
  type ResumeOptions,
} from '../transports/remote/resume/resume-options';
import { DEFAULT_DRAIN_TIMEOUT_MS, HEALTH_PATH, listenRemoteStreams, type RemoteTlsOptions } from '../transports/remote/http/remote-server';
import type { RemoteClientInfo } from '../transports/remote/remote-connection';
import {
  UsageError,
  bearerTokenFromEnvironment,
  checkExposure,
  parseCommandArguments,
  parseDecimal,
  parseMilliseconds,
  parsePort,
} from './arguments';
import type { AgentHosting } from './agent-hosting';
import type * as AgentModule from './agent-module';
import { EXIT_DRAIN_CUT, drainClients } from './drain';
import { STOP_SIGNALS, watchStopSignals, type StoppableProcess } from './shutdown';
import { report, type Subcommand } from './subcommand';

const NAME = 'serve';
const DEFAULT_MAX_CLIENTS = 16;
const DEFAULT_KILL_TIMEOUT_MS = 2000;

const HELP = `usage: acp-wire serve [options] [--] "<agent command>"
       acp-wire serve [options] --agent-module FILE

Exposes an ACP agent that speaks on its stdio over the network: WebSocket (ws://HOST:PORT/acp)
and Streamable HTTP (http://HOST:PORT/acp) on one port. Each client connection gets its own agent
process (the command split into words as a shell would, without a shell), ended with it. Bytes
are passed through as they are: ids and cancellations reach the agent as the client sent them.
With --agent-module, each client connection gets its own agent instance in this process instead.
Prints "listening ws://HOST:PORT/PATH" (wss:// with --tls-cert) on stdout once ready; logs go
to stderr.

options:
  --agent-module FILE    instead of an agent command: a module (CommonJS or ES) exporting
                         createAgent(connection, info) (or a default function) that makes one
                         agent instance per client connection in this process, disposed with it
  --host HOST            address to bind (default ${DEFAULT_HOST}: this machine only); an address
                         other machines can reach needs ACP_WIRE_TOKEN or --insecure-no-token
  --insecure-no-token    serve a reachable --host without a token: anyone who reaches it runs
                         the agent (only behind something else that authenticates clients)
  --port PORT            port (default 0: a free one, printed)
  --path PATH            path (default ${DEFAULT_PATH})
  --tls-cert FILE        serve TLS (wss:// and https://) with this PEM certificate (chain)
  --tls-key FILE         and this PEM private key (both or neither)
  --allow-origin ORIGIN  accept browser pages of this origin (repeatable; none by default)
  --max-clients N        how many clients are served at once; more are refused with HTTP 503
                         (and a line on stderr) (default ${DEFAULT_MAX_CLIENTS})
  --http-idle-timeout MS a Streamable HTTP client with no event stream open and no request for
                         this long has walked away: its connection is closed and its agent
                         ended, freeing its slot (default ${DEFAULT_HTTP_IDLE_TIMEOUT_MS}; 0: never)
  --drain-timeout MS     after SIGTERM, how long clients with a request in flight (either way)
                         may take to see it answered before they are cut (default
                         ${DEFAULT_DRAIN_TIMEOUT_MS}; 0: at once)
  --resume               keep a client's agent when its connection drops, for it to resume:
                         agent messages carry cursors, the last ones are replayed on a resume
                         (WebSocket stream/resume, Streamable HTTP Last-Event-ID); advertised
                         in the initialize answer as capabilities.transport.resumable
  --resume-grace MS      how long a dropped connection waits for its client (default
                         ${DEFAULT_RESUME_GRACE_MS}); then its agent ends (implies --resume)
  --resume-buffer N      messages held per stream for a resume (default
                         ${DEFAULT_RESUME_BUFFER_MESSAGES}; implies --resume)
  --resume-buffer-ms MS  how long each is held (default ${DEFAULT_RESUME_BUFFER_MS}; implies --resume)
  --kill-timeout MS      how long an agent may take to exit once its client has left (its stdin
                         is closed), before SIGTERM to its process tree, then SIGKILL as long
                         again (default ${DEFAULT_KILL_TIMEOUT_MS}); with --agent-module, how long
                         an instance's dispose may take before serve stops waiting for it
  -h, --help             show this text

ACP_WIRE_TOKEN, when set, is the bearer token every client must send
("Authorization: Bearer <token>").

GET ${HEALTH_PATH} on the same port (no token needed) answers 200 "ready", or 503 "full" (at
--max-clients) or "draining", for a load balancer.

SIGTERM drains: new clients get 503 with Retry-After, health says "draining"; each client is
closed (WebSocket close 1001) once it has no request in flight, an idle one at once; at
--drain-timeout the rest are cut (a line on stderr says how many). SIGINT closes every client at
once. A second signal kills every agent.

exit codes: 0 after a SIGTERM drain that cut no client; ${EXIT_DRAIN_CUT} after one that cut some; 130 after
SIGINT (every agent is ended first); 143 when a second signal, or a stop that hangs, kills the
agents; 1 on a system error such as a port in use; 2 for bad usage.`;

/** Parsed `serve` arguments. @internal */
export interface ServeArgs {
  host: string;
  port: number;
  path: string;
  allowedOrigins: string[];
  maxClients: number;
  httpIdleTimeoutMs: number;
  drainTimeoutMs: number;
  killTimeoutMs: number;
  /** `ACP_WIRE_TOKEN`: the bearer token clients must send. */
  token: string | undefined;
  /** `--insecure-no-token`: a reachable `host` without a token is served anyway. */
  insecureNoToken: boolean;
  /** `--tls-cert` and `--tls-key`, read. */
  tls: RemoteTlsOptions | undefined;
  /** `--resume` and its bounds: resumable connections; `undefined` when off. */
  resume: ResumeOptions | undefined;
  /** The agent's program and arguments (empty with `agentModule`). */
  command: string[];
  /** `--agent-module`: the module that makes an agent instance per client, in this process. */
  agentModule: string | undefined;
}

/**
 * Parses `serve`'s arguments; refuses a reachable `--host` without a token before anything listens.
 *
 * @throws UsageError naming the problem
 * @internal
 */
export function parseServeArgs(argv: readonly string[]): ServeArgs {
  const { values, positionals } = parseCommandArguments(argv, {
    host: { type: 'string' },
    port: { type: 'string' },
    path: { type: 'string' },
    'allow-origin': { type: 'string', multiple: true },
    'max-clients': { type: 'string' },
    'http-idle-timeout': { type: 'string' },
    'kill-timeout': { type: 'string' },
    'drain-timeout': { type: 'string' },
    'insecure-no-token': { type: 'boolean' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    'agent-module': { type: 'string' },
    resume: { type: 'boolean' },
    'resume-grace': { type: 'string' },
    'resume-buffer': { type: 'string' },
    'resume-buffer-ms': { type: 'string' },
  });
  const text = (name: string): string | undefined => values[name] as string | undefined;
  const agentModule = text('agent-module');
  if (agentModule === '') throw new UsageError('--agent-module needs a file');
  if (agentModule !== undefined && positionals.length > 0) throw new UsageError('give an agent command or --agent-module, not both');
  if (agentModule === undefined && positionals.length !== 1)
    throw new UsageError(`give exactly one agent command (quote it) or --agent-module FILE, got ${positionals.length}`);
  const host = text('host') ?? DEFAULT_HOST;
  if (host === '') throw new UsageError('--host needs an address');
  const path = text('path') ?? DEFAULT_PATH;
  try {
    checkPath(path);
  } catch {
    throw new UsageError(`--path needs a path that starts with "/" and has no query, fragment or space, got ${JSON.stringify(path)}`);
  }
  if (path === HEALTH_PATH) throw new UsageError(`--path cannot be ${HEALTH_PATH}: that path answers health probes`);
  const token = bearerTokenFromEnvironment();
  const insecureNoToken = values['insecure-no-token'] === true;
  checkExposure('--host', host, token, insecureNoToken);
  return {
    host,
    port: parsePort('--port', text('port') ?? '0'),
    path,
    allowedOrigins: (values['allow-origin'] as string[] | undefined) ?? [],
    maxClients: parseDecimal('--max-clients', text('max-clients') ?? String(DEFAULT_MAX_CLIENTS), 'a number', 1, 65535),
    httpIdleTimeoutMs: parseMilliseconds('--http-idle-timeout', text('http-idle-timeout') ?? String(DEFAULT_HTTP_IDLE_TIMEOUT_MS)),
    drainTimeoutMs: parseMilliseconds('--drain-timeout', text('drain-timeout') ?? String(DEFAULT_DRAIN_TIMEOUT_MS)),
    killTimeoutMs: parseMilliseconds('--kill-timeout', text('kill-timeout') ?? String(DEFAULT_KILL_TIMEOUT_MS)),
    token,
    insecureNoToken,
    tls: readTls(text('tls-cert'), text('tls-key')),
    resume: parseResume(values.resume === true, text),
    command: agentModule === undefined ? splitCommandLine(positionals[0]!) : [],
    agentModule,
  };
}

/** `--resume` and its bounds (any of them turns it on). @throws UsageError for a bad value */
function parseResume(isOn: boolean, text: (name: string) => string | undefined): ResumeOptions | undefined {
  const grace = text('resume-grace');
  const buffer = text('resume-buffer');
  const bufferMs = text('resume-buffer-ms');
  if (!isOn && grace === undefined && buffer === undefined && bufferMs === undefined) return undefined;
  return {
    graceMs: parseMilliseconds('--resume-grace', grace ?? String(DEFAULT_RESUME_GRACE_MS)),
    bufferMessages: parseDecimal('--resume-buffer', buffer ?? String(DEFAULT_RESUME_BUFFER_MESSAGES), 'a number', 1, 1_000_000),
    bufferMs: parseMilliseconds('--resume-buffer-ms', bufferMs ?? String(DEFAULT_RESUME_BUFFER_MS)),
  };
}

/**
 * Reads `--tls-cert` and `--tls-key` (an unreadable file is an operating-system error).
 *
 * @throws UsageError when only one is given, or they are not a PEM certificate and its key
 */
function readTls(certFile: string | undefined, keyFile: string | undefined): RemoteTlsOptions | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) throw new UsageError('give --tls-cert and --tls-key together');
  const tls = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
  try {
    createSecureContext(tls);
  } catch (error) {
    throw new UsageError(`--tls-cert and --tls-key are not a PEM certificate and its private key: ${(error as Error).message}`);
  }
  return tls;
}

/** One client's agent: a process tree whose stdio is bridged to the client's stream. */
interface Agent extends StoppableProcess {
  readonly tree: ProcessTree;
  /** Resolves once the agent's whole process tree has ended. */
  readonly ended: Promise<void>;
}

/**
 * Starts the agent for one client: bytes are bridged both ways, and each side's end ends the other.
 * Its requests in flight either way are counted on `work`, which a drain waits for.
 */
function startAgent(stream: Duplex, info: RemoteClientInfo, args: ServeArgs, work: LineWorkTracker): Agent {
  const name = `agent of ${info.transport} client ${info.connectionId}`;
  const [program, ...rest] = args.command;
  const tree = spawnProcessTree(program!, rest);
  const { child } = tree;
  child.stdin!.on('error', () => {});
  stream.on('error', (error) => report(NAME, `${info.transport} client ${info.connectionId}: ${error.message}`));
  stream.pipe(child.stdin!);
  child.stdout!.pipe(stream);
  // After the pipes: an answer is written to the client before the drain sees its turn done.
  stream.on('data', (chunk: Buffer | string) => work.fromClient(chunk));
  child.stdout!.on('data', (chunk: Buffer) => work.toClient(chunk));
  let isClientGone = false;
  void tree.exited.then((exit) => {
    if (exit.error) report(NAME, `the agent (${args.command.join(' ')}) could not be started: ${exit.error.message}`);
    else if (!isClientGone) report(NAME, `${name} ${exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`}`);
    // The agent is gone: so is its client.
    stream.destroy();
  });
  // The client is gone: end its agent's stdin (a destroyed stream does not end the pipe), and its
  // whole process tree within the kill timeout.
  const ended = new Promise<void>((resolve) => {
    stream.once('close', () => {
      isClientGone = true;
      child.stdin!.end();
      resolve(tree.end(args.killTimeoutMs).then(() => undefined));
    });
  });
  return { name, child, exited: tree.exited, tree, ended };
}

/** One agent process per client, its stdio bridged to the client's stream. */
function processHosting(args: ServeArgs): AgentHosting {
  const agents = new Set<Agent>();
  return {
    onStream(stream, info) {
      const work = new LineWorkTracker();
      const agent = startAgent(stream, info, args, work);
      agents.add(agent);
      void agent.ended.then(() => agents.delete(agent));
      return work;
    },
    processes: () => agents,
    ended: () => Promise.all([...agents].map((agent) => agent.ended)).then(() => undefined),
  };
}

/** The hosting `args` ask for; loads the `--agent-module` before anything listens. */
async function hostingOf(args: ServeArgs, logger: Logger): Promise<AgentHosting> {
  if (args.agentModule === undefined) return processHosting(args);
  // Loaded on use: serving agent processes needs none of it.
  const { loadAgentFactory, moduleHosting } = require('./agent-module') as typeof AgentModule;
  return moduleHosting(await loadAgentFactory(args.agentModule), args.killTimeoutMs, logger);
}

/** The `serve` subcommand. */
export const serve: Subcommand = {
  name: NAME,
  summary: 'expose a stdio agent over WebSocket and Streamable HTTP (an agent process per client)',
  help: HELP,
  async run(argv) {
    const args = parseServeArgs(argv);
    const { token } = args;
    const logger = process.env.ACP_WIRE_LOG ? defaultLogger(NAME) : createStderrLogger({ level: 'warn', name: NAME });
    let hosting: AgentHosting;
    try {
      hosting = await hostingOf(args, logger);
    } catch (error) {
      // A module that threw while loading: one line, as for an operating-system error.
      if (!(error instanceof Error) || error.name !== 'AgentModuleLoadError') throw error;
      report(NAME, error.message);
      return 1;
    }
    const listener = await listenRemoteStreams(
      {
        host: args.host,
        port: args.port,
        path: args.path,
        allowedOrigins: args.allowedOrigins,
        token,
        insecureNoToken: args.insecureNoToken,
        tls: args.tls,
        maxClients: args.maxClients,
        httpIdleTimeoutMs: args.httpIdleTimeoutMs,
        resume: args.resume,
        logger,
      },
      (stream, info) => hosting.onStream(stream, info),
    );
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    // Before the ready line: a SIGTERM sent as soon as it is read drains, rather than killing.
    const signals = watchStopSignals({
      command: NAME,
      stop,
      processes: () => hosting.processes(),
      killTimeoutMs: args.killTimeoutMs,
      graceMs: { SIGTERM: args.drainTimeoutMs },
    });
    process.stdout.write(`listening ${listener.url}\n`);
    const access = token
      ? ' (bearer token required)'
      : isLoopbackHost(args.host)
        ? ''
        : ' (NO TOKEN: anyone who reaches it runs the agent)';
    process.stderr.write(`acp-wire serve: Streamable HTTP at ${listener.httpUrl}${access}\n`);
    await stopped;
    const cut = signals.signal === 'SIGTERM' ? await drainClients(NAME, listener, args.drainTimeoutMs) : 0;
    await listener.close();
    await hosting.ended();
    signals.dispose();
    if (signals.signal === 'SIGINT') return STOP_SIGNALS.SIGINT;
    return cut > 0 ? EXIT_DRAIN_CUT : 0;
  },
};
