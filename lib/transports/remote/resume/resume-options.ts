/**
 * The options of resumable remote connections: the server's replay buffer and grace period, the
 * client's reconnection schedule, and the capability a resumable server advertises.
 *
 * @packageDocumentation
 */
import { checkIdleTimeout } from '../../../server/bounds';
import { checkPositiveInteger } from '../limits';

/** Options of a resumable server (`listenRemote({ resume })`, `acp-wire serve --resume`). */
export interface ResumeOptions {
  /** How many messages each stream holds for a reconnecting client. Default 1000. */
  bufferMessages?: number;
  /** How long a message is held for a reconnecting client, in ms. Default 300,000 (5 min). */
  bufferMs?: number;
  /**
   * How long a connection whose stream dropped is kept (agent, sessions, requests in flight)
   * waiting for its client to resume, in ms. Default 60,000.
   */
  graceMs?: number;
}

/** The {@link ResumeOptions} with their defaults filled in. @internal */
export interface ResumeSettings {
  readonly bufferMessages: number;
  readonly bufferMs: number;
  readonly graceMs: number;
}

/** Default {@link ResumeOptions.bufferMessages}. */
export const DEFAULT_RESUME_BUFFER_MESSAGES = 1000;
/** Default {@link ResumeOptions.bufferMs}. */
export const DEFAULT_RESUME_BUFFER_MS = 300_000;
/** Default {@link ResumeOptions.graceMs}. */
export const DEFAULT_RESUME_GRACE_MS = 60_000;

/**
 * The settings of `resume` (`true`: the defaults), or `undefined` when resumption is off.
 *
 * @throws RangeError or TypeError naming the first invalid field
 * @internal
 */
export function resumeSettings(resume: ResumeOptions | boolean | undefined): ResumeSettings | undefined {
  if (resume === undefined || resume === false) return undefined;
  const options = resume === true ? {} : resume;
  if (typeof options !== 'object' || options === null) throw new TypeError('resume must be true, false or an object');
  checkPositiveInteger('resume.bufferMessages', options.bufferMessages);
  const settings = {
    bufferMessages: options.bufferMessages ?? DEFAULT_RESUME_BUFFER_MESSAGES,
    bufferMs: checkIdleTimeout('resume.bufferMs', options.bufferMs ?? DEFAULT_RESUME_BUFFER_MS),
    graceMs: checkIdleTimeout('resume.graceMs', options.graceMs ?? DEFAULT_RESUME_GRACE_MS),
  };
  return settings;
}

/** The default `reconnect.heartbeatMs` of a Streamable HTTP client: 15 s. */
export const DEFAULT_HTTP_HEARTBEAT_MS = 15_000;

/** Options of a client that reconnects by itself (`connectWebSocket(url, { reconnect })`, `connectHttp`). */
export interface ReconnectOptions {
  /** How many attempts after a drop before the connection fails with `ResumeFailedError`. Default 8. */
  attempts?: number;
  /** The delay before the first attempt, in ms; it doubles at each next one. Default 100. */
  minDelayMs?: number;
  /** The longest delay between attempts, in ms. Default 5,000. */
  maxDelayMs?: number;
  /**
   * Streamable HTTP only: a request that hears nothing from the server for this long (its own
   * bytes count only while it is being sent) is given up as dropped (a silent network) and
   * resumed; the server sends an event stream a keep-alive every 15 s. One timer per connection looks every quarter of it, so a silent request
   * is given up after 1 to 1.25 times this. Milliseconds; `0` never. Default 75,000 (five
   * keep-alives). Applies once the server advertised resumption (never to the `initialize` POST).
   */
  silenceMs?: number;
  /**
   * Streamable HTTP only: after this long without a POST, the client sends the server a
   * heartbeat (an empty `POST` with `Acp-Heartbeat`), and it names the interval on each event
   * stream's `GET`. A server that hears nothing from the client for three intervals drops its
   * event streams (a silent network), so that its grace period starts and the agent of a client
   * lost for longer than it ends. Milliseconds; `0` sends none (the server then waits for TCP to
   * give up). Default 15,000. Applies once the server advertised resumption.
   */
  heartbeatMs?: number;
  /** Called when the stream dropped and an attempt is about to be made (after `delayMs`). */
  onReconnecting?: (event: ReconnectingEvent) => void;
  /** Called once the stream is resumed: every missed message has been or is being replayed. */
  onResumed?: (event: ResumedEvent) => void;
}

/** What {@link ReconnectOptions.onReconnecting} is told. */
export interface ReconnectingEvent {
  /** 1 for the first attempt after a drop. */
  readonly attempt: number;
  /** How long until this attempt. */
  readonly delayMs: number;
  /** Why the stream dropped, or why the previous attempt failed. */
  readonly error: Error;
}

/** What {@link ReconnectOptions.onResumed} is told. */
export interface ResumedEvent {
  /** How many attempts it took. */
  readonly attempts: number;
  /** How many of this client's messages were sent again (the server had not received them). */
  readonly resent: number;
}

/** The {@link ReconnectOptions} with their defaults filled in. @internal */
export interface ReconnectSettings {
  readonly attempts: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly silenceMs: number;
  readonly heartbeatMs: number;
  readonly onReconnecting: (event: ReconnectingEvent) => void;
  readonly onResumed: (event: ResumedEvent) => void;
}

/**
 * The settings of `reconnect` (`true`: the defaults), or `undefined` when it is off.
 *
 * @throws RangeError or TypeError naming the first invalid field
 * @internal
 */
export function reconnectSettings(reconnect: ReconnectOptions | boolean | undefined): ReconnectSettings | undefined {
  if (reconnect === undefined || reconnect === false) return undefined;
  const options = reconnect === true ? {} : reconnect;
  if (typeof options !== 'object' || options === null) throw new TypeError('reconnect must be true, false or an object');
  checkPositiveInteger('reconnect.attempts', options.attempts);
  const settings = {
    attempts: options.attempts ?? 8,
    minDelayMs: checkIdleTimeout('reconnect.minDelayMs', options.minDelayMs ?? 100),
    maxDelayMs: checkIdleTimeout('reconnect.maxDelayMs', options.maxDelayMs ?? 5000),
    silenceMs: checkIdleTimeout('reconnect.silenceMs', options.silenceMs ?? 75_000),
    heartbeatMs: checkIdleTimeout('reconnect.heartbeatMs', options.heartbeatMs ?? DEFAULT_HTTP_HEARTBEAT_MS),
    onReconnecting: options.onReconnecting ?? (() => {}),
    onResumed: options.onResumed ?? (() => {}),
  };
  if (settings.maxDelayMs < settings.minDelayMs) throw new RangeError('reconnect.maxDelayMs must be at least reconnect.minDelayMs');
  return settings;
}

/**
 * The delay before reconnection attempt `attempt` (1-based): full jitter over an exponential
 * ceiling, `random() * min(maxDelayMs, minDelayMs * 2^(attempt-1))`, at least `minDelayMs / 2`.
 *
 * @internal
 */
export function backoffDelay(settings: ReconnectSettings, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.minDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(Math.max(settings.minDelayMs / 2, random() * ceiling));
}

/** What a resumable server advertises in its `initialize` answer. */
export interface ResumableCapability {
  /** How many messages each stream holds. */
  readonly retentionMessages: number;
  /** How long, in seconds. */
  readonly retentionSeconds: number;
}

/**
 * Adds `transport.resumable` to an `initialize` answer's text: in `result.capabilities` (ACP v2),
 * else in `result.agentCapabilities` (ACP v1). Returns the text unchanged when it is not a
 * successful answer with one of those objects.
 *
 * @internal
 */
export function advertiseResumable(line: string, settings: ResumeSettings): string {
  let message: { result?: Record<string, unknown> };
  try {
    message = JSON.parse(line) as typeof message;
  } catch {
    return line;
  }
  const result = message.result;
  if (typeof result !== 'object' || result === null) return line;
  const key = typeof result.capabilities === 'object' && result.capabilities !== null ? 'capabilities' : 'agentCapabilities';
  const capabilities = result[key];
  if (typeof capabilities !== 'object' || capabilities === null) return line;
  const resumable: ResumableCapability = {
    retentionMessages: settings.bufferMessages,
    retentionSeconds: Math.floor(settings.bufferMs / 1000),
  };
  const holder = capabilities as Record<string, unknown>;
  holder.transport = { ...(holder.transport as object | undefined), resumable };
  return JSON.stringify(message);
}

/**
 * The `transport.resumable` an `initialize` answer's text advertises, or `undefined`.
 *
 * @internal
 */
export function resumableOf(line: string): ResumableCapability | undefined {
  if (!line.includes('"resumable"')) return undefined;
  try {
    const result = (JSON.parse(line) as { result?: Record<string, { transport?: { resumable?: ResumableCapability } }> }).result;
    return result?.capabilities?.transport?.resumable ?? result?.agentCapabilities?.transport?.resumable;
  } catch {
    return undefined;
  }
}
