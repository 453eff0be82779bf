/**
 * `checkRemote()` (what `acp-wire check --url` runs): the remote battery against a server over
 * WebSocket or Streamable HTTP.
 *
 * @packageDocumentation
 */
import { REMOTE_CHECKS } from './battery';
import type { CheckReport } from './outcome';
import { AgentUnusableError } from './preflight';
import { type RemoteContext, RemoteContext as Context, type RemoteSettings } from './remote-context';
import { CheckFailure } from './outcome';
import { type CheckOptions, DEFAULT_DEADLINE_MS, runTraced, selectChecks } from './run';
import { SEVERITIES } from './rules';

/** Options of {@link checkRemote}: those of `checkAgent()` that apply to a server, and what the server is known to do. */
export interface RemoteCheckOptions
  extends Pick<
    CheckOptions,
    'timeoutMs' | 'quietMs' | 'deadlineMs' | 'only' | 'failOn' | 'baseline' | 'traceFile' | 'signal' | 'onResult'
  > {
  /** The server's token, sent as `Authorization: Bearer <token>`; `remote.auth` checks the refusals without it (n/a when absent). */
  token?: string;
  /** How many clients the server serves at once; `remote.capacity` fills it and checks the next is refused 503 (n/a when absent). */
  maxClients?: number;
}

function transportOf(url: URL): RemoteSettings['transport'] {
  if (url.protocol === 'ws:' || url.protocol === 'wss:') return 'websocket';
  if (url.protocol === 'http:' || url.protocol === 'https:') return 'http';
  throw new RangeError(`url must be ws://, wss://, http:// or https://, got ${url.protocol}`);
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!(Number.isFinite(resolved) && resolved > 0)) throw new RangeError(`${name} must be a positive number`);
  return resolved;
}

function settingsOf(url: URL, options: RemoteCheckOptions): RemoteSettings {
  if (options.maxClients !== undefined && !(Number.isInteger(options.maxClients) && options.maxClients > 0))
    throw new RangeError('maxClients must be a positive integer');
  return {
    url,
    transport: transportOf(url),
    token: options.token,
    maxClients: options.maxClients,
    timeoutMs: positive('timeoutMs', options.timeoutMs, 10_000),
    quietMs: positive('quietMs', options.quietMs, 300),
    deadlineMs: positive('deadlineMs', options.deadlineMs, DEFAULT_DEADLINE_MS),
    cancelTimeoutMs: 3000,
    exitTimeoutMs: 3000,
  };
}

/**
 * Opens and initializes the shared connection.
 *
 * @throws AgentUnusableError when the server cannot be reached, refuses the connection, or does not answer `initialize` with a result
 */
async function remotePreflight(context: RemoteContext): Promise<void> {
  try {
    await context.link();
  } catch (error) {
    const where = `the server at ${context.settings.url.href}`;
    if (error instanceof CheckFailure) {
      const reason = /answered with an error/.test(error.message)
        ? 'initialize-error'
        : /refused/.test(error.message)
          ? 'not-started'
          : 'no-answer';
      throw new AgentUnusableError(reason, `${where}: ${error.message}`, '');
    }
    throw new AgentUnusableError('not-started', `${where} cannot be reached: ${(error as Error).message}`, '');
  }
}

/**
 * Checks the remote ACP server at `url` (`ws://`, `wss://`: WebSocket; `http://`, `https://`:
 * Streamable HTTP) and resolves with the report of the remote battery (docs/check.md).
 *
 * @remarks Every connection it opens is closed (WebSocket close, HTTP `DELETE`) before it settles.
 * Checks that need what is known only to the caller (`token`, `maxClients`) or advertised by the
 * server (`transport.resumable`) are `not-applicable` without it.
 * @throws RangeError (rejects) for a URL of another scheme, an invalid option or an unknown name in `only`
 * @throws AgentUnusableError (rejects) when the server cannot be reached or initialized
 * @example
 * ```ts
 * const report = await checkRemote('http://127.0.0.1:4000/acp', { token: process.env.ACP_WIRE_TOKEN });
 * ```
 */
export async function checkRemote(url: string | URL, options: RemoteCheckOptions = {}): Promise<CheckReport> {
  const target = new URL(url);
  const settings = settingsOf(target, options);
  if (options.failOn !== undefined && !SEVERITIES.includes(options.failOn))
    throw new RangeError(`failOn must be one of ${SEVERITIES.join(', ')}`);
  const unknown = options.baseline?.find((id) => !REMOTE_CHECKS.some((check) => check.id === id));
  if (unknown !== undefined) throw new RangeError(`baseline: no check named ${JSON.stringify(unknown)}`);
  const checks = selectChecks(options.only, REMOTE_CHECKS);
  return runTraced(target.href, options, (clock, onLine) => new Context(settings, clock, onLine), checks, remotePreflight);
}
