/**
 * `acp-wire conduct`: runs an ACP proxy chain for a client on stdio, or one per client on TCP
 * (`--tcp`) or over WebSocket and Streamable HTTP (`--listen`). A component may be a command or
 * the URL of a component already running elsewhere.
 *
 * @packageDocumentation
 */
import { splitCommandLine } from '../chain/command-line';
import type { ComponentSource } from '../chain/chain-component';
import { Conductor, type ConductorOptions, type ConductorOutcome } from '../chain/conductor';
import type * as ListenerModule from '../chain/conductor-listener';
import { DEFAULT_CHAIN_IDLE_TIMEOUT_MS, DEFAULT_MAX_CHAINS } from '../chain/listener-defaults';
import { ComponentConnectionError, closeUrlComponents, connectUrlComponents } from '../chain/url-components';
import type { Connection } from '../connection/connection';
import { describeThrown } from '../jsonrpc/errors';
import type * as BridgeComponentModule from '../mcp-bridge/component';
import type { McpBridgeTransport } from '../mcp-bridge/declarations';
import { createStderrLogger, defaultLogger, type Logger } from '../support/logger';
import type { ConductorTraceOptions } from '../chain/conductor-trace';
import { DEFAULT_DRAIN_TIMEOUT_MS } from '../server/drain-timeout';
import { DEFAULT_HOST } from '../server/loopback';
import { connectStdio } from '../transports/stdio';
import { isPeerUrl } from '../transports/url';
import {
  UsageError,
  bearerTokenFromEnvironment,
  checkExposure,
  parseCommandArguments,
  parseDecimal,
  parseMilliseconds,
  parsePort,
  type ParsedArguments,
} from './arguments';
import { EXIT_DRAIN_CUT, drainClients } from './drain';
import type * as RemoteConductModule from './remote-conduct';
import type { ListenAddress } from './remote-conduct';
import { STOP_SIGNALS, watchStopSignals, type StopSignal, type StoppableProcess } from './shutdown';
import type { EarlyComponents } from './early-spawn';
import { report, type Subcommand } from './subcommand';
import type * as TraceCommandModule from './trace';

const NAME = 'conduct';

// The server modes, the MCP bridge and the live trace viewer are loaded when an option asks for
// them: a chain on stdio loads none of them (nor WebSocket, HTTP or the trace modules).
const remoteConduct = () => require('./remote-conduct') as typeof RemoteConductModule;
const listenConductor: typeof ListenerModule.listenConductor = (...args) =>
  (require('../chain/conductor-listener') as typeof ListenerModule).listenConductor(...args);
const mcpBridgeComponent: typeof BridgeComponentModule.mcpBridgeComponent = (...args) =>
  (require('../mcp-bridge/component') as typeof BridgeComponentModule).mcpBridgeComponent(...args);
const startLiveTraceViewer: typeof TraceCommandModule.startLiveTraceViewer = (...args) =>
  (require('./trace') as typeof TraceCommandModule).startLiveTraceViewer(...args);
const DEFAULT_KILL_TIMEOUT_MS = 2000;

/** A chain's MCP bridge (`--mcp-bridge`), preferring `--mcp-bridge-transport`. */
function bridgeComponent(args: ConductArgs, logger: (name: string) => Logger): BridgeComponentModule.McpBridgeComponent['component'] {
  return mcpBridgeComponent({ logger: logger('mcp-bridge'), prefer: args.mcpBridgeTransport }).component;
}

const HELP = `usage: acp-wire conduct [options] [--] "<proxy command>"… "<agent command>"

Runs an ACP proxy chain: the client speaks to the conductor on stdin/stdout; each command is
started as a child process over its stdio (split into words as a shell would, without a shell);
the last one is the agent, the others are proxies in order. A component may also be the URL of
one already running elsewhere: ws://, wss://, http://, https:// or tcp://HOST:PORT (connected for
each chain before the client's first message is read).

options:
  --trace              print every line of every hop on stderr, with time and direction
  --tcp PORT           serve clients on 127.0.0.1:PORT instead of stdio: a chain per client,
                       started on the client's first byte; prints "listening PORT" on stdout
                       once ready (0 picks a free port); stops when stdin ends
  --listen ADDRESS     serve clients over WebSocket and Streamable HTTP instead of stdio: a chain
                       per client connection; ADDRESS is PORT, HOST:PORT or ws://HOST:PORT/PATH
                       (host 127.0.0.1, path /acp by default); prints "listening ws://HOST:PORT/PATH"
                       on stdout once ready; stops when stdin ends; a HOST other machines can
                       reach needs ACP_WIRE_TOKEN or --insecure-no-token
  --insecure-no-token  with --listen: serve a reachable HOST without a token (anyone who
                       reaches it runs the chain; only behind something that authenticates)
  --max-chains N       with --tcp or --listen: how many clients are served at once; more are
                       refused (with a line on stderr) (default ${DEFAULT_MAX_CHAINS})
  --drain-timeout MS   with --listen: after SIGTERM, how long clients with a request in flight
                       (either way) may take to see it answered before they are cut (default
                       ${DEFAULT_DRAIN_TIMEOUT_MS}; 0: at once)
  --idle-timeout MS    with --tcp: close a client that sent and received nothing for MS with
                       nothing in flight, and shut its chain down (default ${DEFAULT_CHAIN_IDLE_TIMEOUT_MS}, 0: never)
  --kill-timeout MS    how long a component may take to exit once its stdin is closed, before
                       SIGTERM, then SIGKILL as long again; on stdio, also how long a first
                       SIGINT waits for the client to end by itself (default ${DEFAULT_KILL_TIMEOUT_MS})
  --request-timeout MS cancel a request forwarded toward the agent that is not answered within
                       MS, and answer it -32603 {"reason":"request_timeout"} (default 0: never)
  --mcp-bridge         run an MCP-over-ACP bridge in this process as the last proxy before the
                       agent: MCP servers the client declares with type "acp" reach an agent
                       that does not support them as http servers on a 127.0.0.1 endpoint (or
                       as stdio servers, "acp-wire mcp-stdio", when it takes only those); an
                       agent that supports them is left alone (see docs/mcp-over-acp.md; with
                       --tcp or --listen, one bridge per chain)
  --mcp-bridge-transport TRANSPORT
                       with --mcp-bridge: how the agent is given those servers when it takes
                       both: http (default) or stdio (the relay); an agent that takes only one
                       gets that one
  --trace-file PATH    write every message between the components to PATH (truncated first), one
                       JSON event per line: the ACP Rust SDK conductor's trace format (see
                       docs/tracing.md; "acp-wire trace view PATH" shows it)
  --serve              serve a live sequence diagram of the chain on 127.0.0.1 while it runs;
                       prints "acp-wire conduct: viewer http://127.0.0.1:PORT/" on stderr
  --port N             with --serve: the viewer's port (default 0: a free one)
  -h, --help           show this text

--trace-file and --serve trace the one chain on stdio, of components started as commands: not
with --tcp, --listen or a component named by a URL.

ACP_WIRE_TOKEN, when set, is the bearer token --listen clients must send, and the one sent to
components named by a URL.

With --listen, GET /healthz on the same port (no token needed) answers 200 "ready", or 503
"full" (at --max-chains) or "draining", for a load balancer; SIGTERM drains: new clients get 503
with Retry-After, each client is closed (WebSocket close 1001) and its chain shut down once it has
no request in flight, an idle one at once; at --drain-timeout the rest are cut (a line on stderr
says how many).

exit codes: 0 when the client's stdin ends (with --tcp or --listen: when stdin ends), or after a
SIGTERM drain (--listen) that cut no client; ${EXIT_DRAIN_CUT} after one that cut some; 1 when a
component died, could not be started or connected (named on stderr), or on a system error such
as a port in use; 2 for bad usage; 130/143 after SIGINT/SIGTERM (the chain is shut down first; a
further signal kills it).`;

/** Parsed `conduct` arguments. */
interface ConductArgs {
  trace: boolean;
  tcpPort: number | undefined;
  listen: ListenAddress | undefined;
  maxChains: number;
  idleTimeoutMs: number | undefined;
  /** `--drain-timeout` (with `--listen`): the SIGTERM drain's deadline. */
  drainTimeoutMs: number;
  killTimeoutMs: number;
  requestTimeoutMs: number | undefined;
  /** `--trace-file`: the trace file of the chain. */
  traceFile: string | undefined;
  /** `--serve` (with `--port`): the live viewer's port. */
  viewerPort: number | undefined;
  /** `ACP_WIRE_TOKEN`: required from `--listen` clients, sent to URL components. */
  token: string | undefined;
  /** `--insecure-no-token`: a reachable `--listen` host without a token is served anyway. */
  insecureNoToken: boolean;
  /** `--mcp-bridge`: an in-process `McpBridge` just before the agent, in each chain. */
  mcpBridge: boolean;
  /** `--mcp-bridge-transport`: the transport the bridge prefers. */
  mcpBridgeTransport: McpBridgeTransport;
  commands: string[];
}

function parseConductArgs(argv: readonly string[]): ConductArgs {
  const { values, positionals } = parseCommandArguments(argv, {
    trace: { type: 'boolean' },
    tcp: { type: 'string' },
    listen: { type: 'string' },
    'max-chains': { type: 'string' },
    'idle-timeout': { type: 'string' },
    'drain-timeout': { type: 'string' },
    'kill-timeout': { type: 'string' },
    'request-timeout': { type: 'string' },
    'trace-file': { type: 'string' },
    serve: { type: 'boolean' },
    port: { type: 'string' },
    'mcp-bridge': { type: 'boolean' },
    'mcp-bridge-transport': { type: 'string' },
    'insecure-no-token': { type: 'boolean' },
  });
  const text = (name: string): string | undefined => values[name] as string | undefined;
  if (text('tcp') !== undefined && text('listen') !== undefined) throw new UsageError('give --tcp or --listen, not both');
  const isServer = text('tcp') !== undefined || text('listen') !== undefined;
  if (text('max-chains') !== undefined && !isServer) throw new UsageError('--max-chains needs --tcp or --listen');
  if (text('idle-timeout') !== undefined && text('tcp') === undefined) throw new UsageError('--idle-timeout needs --tcp');
  if (text('drain-timeout') !== undefined && text('listen') === undefined) throw new UsageError('--drain-timeout needs --listen');
  checkTraceOptions(values, positionals, text('tcp') !== undefined ? '--tcp' : text('listen') !== undefined ? '--listen' : undefined);
  const args: ConductArgs = {
    trace: values.trace === true,
    tcpPort: optional(text('tcp'), (value) => parsePort('--tcp', value)),
    listen: optional(text('listen'), (value) => remoteConduct().parseListen(value)),
    maxChains: optional(text('max-chains'), (value) => parseDecimal('--max-chains', value, 'a number', 1, 65535)) ?? DEFAULT_MAX_CHAINS,
    idleTimeoutMs: optional(text('idle-timeout'), (value) => parseMilliseconds('--idle-timeout', value)),
    drainTimeoutMs: optional(text('drain-timeout'), (value) => parseMilliseconds('--drain-timeout', value)) ?? DEFAULT_DRAIN_TIMEOUT_MS,
    killTimeoutMs: optional(text('kill-timeout'), (value) => parseMilliseconds('--kill-timeout', value)) ?? DEFAULT_KILL_TIMEOUT_MS,
    requestTimeoutMs: optional(text('request-timeout'), (value) => parseMilliseconds('--request-timeout', value)),
    traceFile: text('trace-file'),
    viewerPort: values.serve === true ? (optional(text('port'), (value) => parsePort('--port', value)) ?? 0) : undefined,
    // Read only where it is used: by --listen, and by the URL components.
    token: text('listen') !== undefined || positionals.some(isPeerUrl) ? bearerTokenFromEnvironment() : undefined,
    insecureNoToken: values['insecure-no-token'] === true,
    commands: positionals,
    mcpBridge: values['mcp-bridge'] === true,
    mcpBridgeTransport: parseBridgeTransport(text('mcp-bridge-transport'), values['mcp-bridge'] === true),
  };
  if (args.insecureNoToken && !args.listen) throw new UsageError('--insecure-no-token needs --listen');
  if (args.listen) checkExposure('--listen', args.listen.host ?? DEFAULT_HOST, args.token, args.insecureNoToken);
  if (args.commands.length === 0) throw new UsageError('give at least the agent command');
  for (const command of args.commands) if (!isPeerUrl(command)) splitCommandLine(command);
  return args;
}

/** `--mcp-bridge-transport`: `http` or `stdio`, with `--mcp-bridge`; `http` when not given. */
function parseBridgeTransport(value: string | undefined, isBridging: boolean): McpBridgeTransport {
  if (value === undefined) return 'http';
  if (!isBridging) throw new UsageError('--mcp-bridge-transport needs --mcp-bridge');
  if (value !== 'http' && value !== 'stdio') throw new UsageError(`--mcp-bridge-transport takes http or stdio, got "${value}"`);
  return value;
}

/**
 * `--trace-file` and `--serve` trace one chain whose components the conductor starts (a component
 * reached by a URL is not a wire the conductor reads as a trace): refused with a server mode or a
 * URL component.
 */
function checkTraceOptions(values: ParsedArguments['values'], positionals: readonly string[], serverMode: string | undefined): void {
  const traceFile = values['trace-file'] as string | undefined;
  if (values.port !== undefined && values.serve !== true) throw new UsageError('--port needs --serve');
  if (traceFile === '') throw new UsageError('--trace-file needs a path, got ""');
  const given = [traceFile !== undefined && '--trace-file', values.serve === true && '--serve'].filter(Boolean).join(' and ');
  if (given === '') return;
  if (serverMode) throw new UsageError(`${given} trace one chain: they cannot be used with ${serverMode}`);
  const url = positionals.find(isPeerUrl);
  if (url !== undefined)
    throw new UsageError(`${given} trace components started as commands: they cannot be used with a component named by a URL (${url})`);
}

function optional<T>(text: string | undefined, parse: (text: string) => T): T | undefined {
  return text === undefined ? undefined : parse(text);
}

/** Each connection's logger: a wire trace with `--trace`, else `ACP_WIRE_LOG` or warnings. */
function loggerFactory(trace: boolean): (name: string) => Logger {
  if (trace) return (name) => createStderrLogger({ level: 'trace', name });
  if (process.env.ACP_WIRE_LOG) return (name) => defaultLogger(name);
  return (name) => createStderrLogger({ level: 'warn', name });
}

/** Reports a chain that ended because of a component; returns whether it did. */
function reportOutcome(outcome: ConductorOutcome): boolean {
  if (outcome.reason === 'component not started') report(NAME, outcome.message);
  else if (outcome.reason === 'component ended') report(NAME, `${outcome.message}; the chain was shut down`);
  else return false;
  return true;
}

/** Reports a chain that could not be started (a URL component could not be connected). */
function reportChainFailure(error: unknown): void {
  if (error instanceof ComponentConnectionError) report(NAME, `could not connect a component: ${error.message}; the chain was not started`);
  else report(NAME, `could not start a chain: ${describeThrown(error)}`);
}

/** The components of the running chains, for a forced stop. */
function processesOf(chains: Iterable<Conductor>): StoppableProcess[] {
  return [...chains].flatMap((chain) => chain.components);
}

/** Where each chain's components come from, and how they are run. */
class ChainRunner {
  readonly chains = new Set<Conductor>();
  readonly #aborter = new AbortController();
  /** The components the program spawned already, until the chain takes them. */
  #early: EarlyComponents | undefined;

  constructor(
    readonly args: ConductArgs,
    readonly logger: (name: string) => Logger,
    early: EarlyComponents | undefined,
  ) {
    // Used only if spawned for these very command lines, one per component (`--mcp-bridge` would
    // add one before the agent); otherwise the program discards them.
    const isSame =
      early !== undefined &&
      early.commands.length === args.commands.length &&
      early.commands.every((command, i) => command === args.commands[i]);
    this.#early = isSame && !args.mcpBridge ? early : undefined;
  }

  /** The processes spawned already for the chain's components, by index; taken once. */
  #takeEarly(): ConductorOptions['spawned'] {
    const trees = this.#early?.trees;
    this.#early = undefined;
    return trees;
  }

  /** Options of the URL components: `ACP_WIRE_TOKEN`, and aborted by {@link ChainRunner.abort}. */
  get urlOptions(): { token: string | undefined; signal: AbortSignal } {
    return { token: this.args.token, signal: this.#aborter.signal };
  }

  /** Stops connecting URL components. */
  abort(): void {
    this.#aborter.abort();
  }

  /**
   * Connects the URL components, then opens the client (so nothing the client sends meets a chain
   * not there yet) and runs its chain; resolves with whether it failed because of a component.
   *
   * @param trace - the chain's trace options (`--trace-file`, `--serve`)
   * @throws the file system's error when the trace file cannot be opened (the client is closed)
   */
  async run(openClient: () => Connection, trace: ConductorTraceOptions = {}): Promise<boolean> {
    const { args, logger } = this;
    let components: ComponentSource[];
    try {
      components = await connectUrlComponents(args.commands, { urlOptions: this.urlOptions, logger });
    } catch (error) {
      // Stopped while connecting: not a failure of the chain.
      const isFailure = !this.#aborter.signal.aborted;
      if (isFailure) reportChainFailure(error);
      await openClient().close();
      return isFailure;
    }
    if (this.#aborter.signal.aborted) {
      // Stopped while connecting: start nothing.
      await Promise.all([closeUrlComponents(components), openClient().close()]);
      return false;
    }
    if (args.mcpBridge) components.splice(-1, 0, bridgeComponent(args, logger));
    const client = openClient();
    let conductor: Conductor;
    try {
      conductor = new Conductor({
        client,
        components,
        logger,
        killTimeoutMs: args.killTimeoutMs,
        requestTimeoutMs: args.requestTimeoutMs,
        spawned: this.#takeEarly(),
        ...trace,
      });
    } catch (error) {
      await Promise.all([closeUrlComponents(components), client.close()]);
      throw error;
    }
    this.chains.add(conductor);
    const outcome = await conductor.closed;
    this.chains.delete(conductor);
    return reportOutcome(outcome);
  }
}

async function conductOnStdio(runner: ChainRunner): Promise<number> {
  const { traceFile, viewerPort } = runner.args;
  // Listening first: a port in use is reported before anything is started.
  const viewer = viewerPort === undefined ? undefined : await startLiveTraceViewer(NAME, viewerPort);
  try {
    return await runOnStdio(runner, { traceFile, onTraceEvent: viewer?.onTraceEvent });
  } finally {
    await viewer?.close();
  }
}

async function runOnStdio(runner: ChainRunner, trace: ConductorTraceOptions): Promise<number> {
  let client: Connection | undefined;
  let isStopping = false;
  const signals = watchStopSignals({
    command: NAME,
    stop: () => {
      isStopping = true;
      runner.abort();
      for (const chain of runner.chains) void chain.close();
    },
    processes: () => processesOf(runner.chains),
    killTimeoutMs: runner.args.killTimeoutMs,
    isClientConnected: () => client !== undefined && !client.isClosed,
  });
  let failed: boolean;
  try {
    failed = await runner.run(() => {
      client = connectStdio({ name: 'client', logger: runner.logger('client') });
      if (isStopping) void client.close();
      return client;
    }, trace);
  } finally {
    signals.dispose();
  }
  if (failed) return 1;
  return signals.signal ? STOP_SIGNALS[signals.signal] : 0;
}

/**
 * Prints `ready` once the stop signals are handled (a SIGTERM sent as soon as it is read is a
 * stop, not a kill), then serves until the conductor's stdin ends (in the server modes stdin
 * carries no protocol: its end is the signal to stop) or a stop signal; then runs `close` with the
 * signal, if any (it may take `graceMs` longer after that signal before a forced stop). Resolves
 * with the signal.
 */
async function serveUntilStopped(
  runner: ChainRunner,
  ready: string,
  close: (signal: StopSignal | undefined) => Promise<void>,
  graceMs: Partial<Record<StopSignal, number>> = {},
): Promise<StopSignal | undefined> {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const signals = watchStopSignals({
    command: NAME,
    stop,
    processes: () => processesOf(runner.chains),
    killTimeoutMs: runner.args.killTimeoutMs,
    graceMs,
  });
  process.stdout.write(`${ready}\n`);
  process.stdin.once('end', stop).once('close', stop).once('error', stop);
  process.stdin.resume();
  await stopped;
  process.stdin.pause();
  process.stdin.unref?.();
  runner.abort();
  await close(signals.signal);
  signals.dispose();
  return signals.signal;
}

/** `--tcp` and `--listen`: a chain per client, until stdin ends or a stop signal. */
async function conductOnServer(runner: ChainRunner): Promise<number> {
  const { args, logger } = runner;
  let anyFailed = false;
  const listener = await listenConductor(args.listen ? remoteConduct().listenUrlOf(args.listen) : { port: args.tcpPort! }, {
    components: args.commands,
    logger,
    killTimeoutMs: args.killTimeoutMs,
    requestTimeoutMs: args.requestTimeoutMs,
    maxChains: args.maxChains,
    idleTimeoutMs: args.idleTimeoutMs,
    urlOptions: runner.urlOptions,
    remote: { token: args.token, insecureNoToken: args.insecureNoToken },
    ...(args.mcpBridge ? { beforeAgent: () => bridgeComponent(args, logger) } : {}),
    onChain: (conductor) => {
      runner.chains.add(conductor);
      void conductor.closed.then((outcome) => {
        runner.chains.delete(conductor);
        anyFailed = reportOutcome(outcome) || anyFailed;
      });
    },
    onChainFailed: (error) => {
      anyFailed = true;
      reportChainFailure(error);
    },
  });
  // With --listen, SIGTERM drains (a load balancer's rolling deploy); with --tcp it closes at once.
  const isDrained = (signal: StopSignal | undefined): boolean => signal === 'SIGTERM' && args.listen !== undefined;
  let cut = 0;
  const close = async (signal: StopSignal | undefined): Promise<void> => {
    if (isDrained(signal)) cut = await drainClients(NAME, listener.pool, args.drainTimeoutMs);
    await listener.close();
  };
  const ready = `listening ${args.listen ? listener.url : listener.port}`;
  const signal = await serveUntilStopped(runner, ready, close, args.listen ? { SIGTERM: args.drainTimeoutMs } : {});
  if (anyFailed) return 1;
  if (isDrained(signal)) return cut > 0 ? EXIT_DRAIN_CUT : 0;
  return signal ? STOP_SIGNALS[signal] : 0;
}

/** The `conduct` subcommand. */
export const conduct: Subcommand = {
  name: NAME,
  summary: 'run an ACP proxy chain: for a client on stdio, or one per client (--tcp, --listen)',
  help: HELP,
  async run(argv, context = {}) {
    const args = parseConductArgs(argv);
    const runner = new ChainRunner(args, loggerFactory(args.trace), context.early);
    return args.listen || args.tcpPort !== undefined ? conductOnServer(runner) : conductOnStdio(runner);
  },
};
