/**
 * The race soak: a seeded driver that sends requests with random cancellation from one side, a
 * handler with random behaviour on the other, and a checker that reads a connection's wire trace.
 *
 * @remarks
 * Used by spec/soak/*.spec.ts, by spec/fixtures/fault-peer.ts (`soak` mode, the far end over a
 * child process) and by scripts/soak.ts. It imports nothing from mocha or chai so a child process
 * can run it.
 */
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { RpcError, type Connection, type JsonValue, type PreparedRequest, type SentRequest } from '../../lib';
import type { TraceChecker } from './trace-checker';
import { seededRandom } from './random';

/** The method every soak request uses. */
export const SOAK_METHOD = 'soak/work';

/** What the receiving handler does with one soak request (chosen by the sender, in `params.b`). */
export type Behaviour = 'sync' | 'answer' | 'ignore' | 'honour' | 'partial' | 'dispose' | 'drop' | 'throw' | 'throwPlain';

/** How the sender consumes and cancels one soak request. */
export type Strategy = 'await' | 'cancelNow' | 'cancelLater' | 'handleTwice' | 'signal' | 'mix' | 'drop' | 'detach' | 'prepared';

const BEHAVIOURS: readonly Behaviour[] = ['sync', 'answer', 'ignore', 'honour', 'partial', 'dispose', 'drop', 'throw', 'throwPlain'];
const STRATEGIES: readonly Strategy[] = ['await', 'cancelNow', 'cancelLater', 'handleTwice', 'signal', 'mix', 'drop', 'detach', 'prepared'];

/** The params of a soak request: behaviour and delay (`-1`: a macrotask; else milliseconds). */
export interface WorkParams {
  b: Behaviour;
  d: number;
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function later(delay: number, fn: () => void): void {
  if (delay < 0) setImmediate(fn);
  else setTimeout(fn, delay);
}

/** Registers the soak handler: each request does what its `params.b` says after `params.d`. */
export function installSoakHandler(connection: Connection): void {
  connection.onRequest(SOAK_METHOD, (params: WorkParams, responder) => {
    const { b, d } = params;
    switch (b) {
      case 'sync':
        return { ok: true };
      case 'answer':
        return later(d, () => responder.respond({ ok: true }));
      case 'ignore':
        // Sees the cancel and answers normally anyway.
        responder.signal.addEventListener('abort', () => undefined);
        return later(d, () => responder.respond({ ok: true }));
      case 'honour':
      case 'partial': {
        const timer = setTimeout(() => responder.respond({ ok: true }), Math.max(d, 0));
        responder.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          if (b === 'honour') responder.respondCancelled();
          else responder.respond({ partial: true });
        });
        return undefined;
      }
      case 'dispose':
        return later(d, () => responder[Symbol.dispose]());
      case 'drop':
        return undefined;
      case 'throw':
        return new Promise((_resolve, reject) => later(d, () => reject(new RpcError(-32001, 'soak failure'))));
      case 'throwPlain':
        throw new Error('plain');
    }
  });
}

/** The counts a sender keeps. */
export interface SenderReport {
  sent: number;
  resolved: number;
  rejected: number;
  cancelCalls: number;
  cancelsEnqueued: number;
  /** Broken promises of the sending API (e.g. `cancel()` returning true after settlement). */
  violations: string[];
}

/** One request for a sender to send. */
export interface SoakRequest {
  method: string;
  params?: unknown;
}

/** Options of {@link runSender}. */
export interface SenderOptions {
  seed: number;
  count: number;
  /** Most awaited requests outstanding at once. Default 256. */
  window?: number;
  /** Makes each request (default: {@link SOAK_METHOD} with a random behaviour and delay). */
  request?: (random: () => number) => SoakRequest;
}

/** A {@link SOAK_METHOD} request with a random behaviour and delay. */
export function soakRequest(random: () => number): SoakRequest {
  const params: WorkParams = { b: pick(random, BEHAVIOURS), d: Math.floor(random() * 5) - 1 };
  return { method: SOAK_METHOD, params };
}

/**
 * Sends `count` requests (soak requests by default), each with a random cancellation strategy.
 *
 * @returns once every request was sent and every awaited one has settled (dropped and detached
 * requests may still be pending; drain them with {@link drain})
 */
export async function runSender(connection: Connection, options: SenderOptions): Promise<SenderReport> {
  const random = seededRandom(options.seed);
  const report: SenderReport = { sent: 0, resolved: 0, rejected: 0, cancelCalls: 0, cancelsEnqueued: 0, violations: [] };
  const window = options.window ?? 256;
  const active = new Set<Promise<void>>();
  const settled = (): number => report.resolved + report.rejected;
  const stuck = (): string => `${active.size} awaited requests unsettled`;
  for (let i = 0; i < options.count; i++) {
    const done = sendOne(connection, random, (options.request ?? soakRequest)(random), report);
    report.sent++;
    if (done) {
      active.add(done);
      void done.then(() => active.delete(done));
    }
    // Some requests wait for a collection (dropped responders): keep collecting while the window is full.
    if (active.size >= window) await drain(() => active.size < window, stuck, { progress: settled });
    if (random() < 0.2) await nextMacrotask();
  }
  await drain(() => active.size === 0, stuck, { progress: settled });
  return report;
}

type Cancel = () => boolean;

/** What a strategy needs: a seeded delay and a checked way to call a cancel. */
interface StrategyTools {
  random: () => number;
  delay: () => number;
  /** Calls `cancel`, counting it, and records a broken promise of the sending API. */
  tryCancel: (isSettled: () => boolean, cancel: Cancel) => void;
  report: SenderReport;
}

function sendOne(connection: Connection, random: () => number, request: SoakRequest, report: SenderReport): Promise<void> | undefined {
  const { method, params } = request;
  const strategy = pick(random, STRATEGIES);
  let enqueued = 0;
  const tools: StrategyTools = {
    random,
    report,
    delay: () => Math.floor(random() * 5) - 1,
    tryCancel: (isSettled, cancel) => {
      const wasSettled = isSettled();
      const didSend = cancel();
      report.cancelCalls++;
      if (didSend) report.cancelsEnqueued++;
      if (didSend && wasSettled) report.violations.push(`cancel() enqueued a cancel after settlement (${strategy})`);
      if (didSend && ++enqueued > 1) report.violations.push(`two cancel() calls enqueued for one request (${strategy})`);
    },
  };
  if (strategy === 'prepared') return sendPrepared(connection.prepareRequest(method, params), tools);
  const controller = strategy === 'signal' || strategy === 'mix' ? new AbortController() : undefined;
  const sent = connection.sendRequest(method, params, controller ? { signal: controller.signal } : {});
  return applyStrategy(strategy, sent, controller, tools);
}

/** A prepared request: a handle taken before sending does nothing, and may cancel afterwards. */
function sendPrepared(prepared: PreparedRequest, tools: StrategyTools): Promise<void> {
  const handle = prepared.cancellationHandle();
  if (handle.cancel()) tools.report.violations.push('a handle cancelled a request before it was sent');
  const sent = prepared.send();
  if (tools.random() < 0.5)
    later(tools.delay(), () =>
      tools.tryCancel(
        () => sent.isSettled,
        () => handle.cancel(),
      ),
    );
  return consume(sent, tools.report);
}

function applyStrategy(
  strategy: Strategy,
  sent: SentRequest,
  controller: AbortController | undefined,
  tools: StrategyTools,
): Promise<void> | undefined {
  const { delay, tryCancel, report } = tools;
  const settled = (): boolean => sent.isSettled;
  switch (strategy) {
    case 'cancelNow':
      tryCancel(settled, () => sent.cancel());
      break;
    case 'cancelLater':
      later(delay(), () => tryCancel(settled, () => sent.cancel()));
      break;
    case 'handleTwice': {
      const handle = sent.cancellationHandle();
      later(delay(), () => {
        tryCancel(settled, () => handle.cancel());
        tryCancel(settled, () => handle.cancel());
      });
      break;
    }
    case 'signal':
      later(delay(), () => controller!.abort());
      break;
    case 'mix': {
      const handle = sent.cancellationHandle();
      later(delay(), () => controller!.abort());
      later(delay(), () => tryCancel(settled, () => handle.cancel()));
      later(delay(), () => tryCancel(settled, () => sent.cancel()));
      break;
    }
    case 'drop':
      // Never awaited: the collector's cancel-on-drop decides whether a cancel goes out.
      return undefined;
    case 'detach': {
      const handle = sent.cancellationHandle();
      sent.detach();
      if (tools.random() < 0.5) later(delay(), () => tryCancel(settled, () => handle.cancel()));
      return undefined;
    }
  }
  return consume(sent, report);
}

async function consume(sent: PromiseLike<unknown>, report: SenderReport): Promise<void> {
  try {
    await sent;
    report.resolved++;
  } catch (error) {
    report.rejected++;
    if (!(error instanceof RpcError)) report.violations.push(`a request rejected with ${String(error)}`);
  }
}

/** Options of {@link drain}. */
export interface DrainOptions {
  /** A number that changes whenever something happened (e.g. lines traced); collections wait while it moves. */
  progress?: () => number;
  /** Give up after this many milliseconds. Default 120 000. */
  limitMs?: number;
  /** Called with each forced local collection, e.g. to ask the other side to collect too. */
  collect?: () => void;
}

/**
 * Waits until `isDone()` holds, one macrotask at a time, forcing a collection when nothing has
 * progressed for a while (50 macrotasks, doubling while still nothing moves) so that dropped
 * responders and dropped requests here are noticed. (Across processes, each side's idle collector
 * notices its own drops; the soak shortens its delays with `configureIdleCollection`.)
 *
 * @throws Error after `limitMs`, with `describe()` in the message
 */
export async function drain(isDone: () => boolean, describe: () => string, options: DrainOptions = {}): Promise<void> {
  const progress = options.progress ?? ((): number => 0);
  const deadline = Date.now() + (options.limitMs ?? 120_000);
  let last = progress();
  let idle = 0;
  let threshold = 50;
  while (!isDone()) {
    if (Date.now() > deadline) throw new Error(`the soak did not drain: ${describe()}`);
    await nextMacrotask();
    const now = progress();
    if (now !== last) {
      last = now;
      idle = 0;
      threshold = 50;
    } else if (++idle >= threshold) {
      forceGc();
      options.collect?.();
      idle = 0;
      threshold = Math.min(threshold * 2, 50_000);
    }
  }
}

function forceGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the soak needs --expose-gc');
  gc();
}

/** What the far end of a child-process soak reports. */
export interface PeerFinish {
  checker: ReturnType<TraceChecker['report']>;
  sender: SenderReport | null;
  pendingCount: number;
  inflightCount: number;
}

/**
 * Makes `connection` the far end of a soak: the soak handler, plus `soak/start` `{seed, count}`
 * (runs a sender towards the other side, answers its report) and `soak/finish` (drains, then
 * answers a {@link PeerFinish}). `checker` must be the connection's logger.
 */
export function installSoakPeer(connection: Connection, checker: TraceChecker): void {
  installSoakHandler(connection);
  let sender: SenderReport | null = null;
  connection.onRequest('soak/start', async (options: SenderOptions) => {
    sender = await runSender(connection, options);
    return { ...sender } as unknown as JsonValue;
  });
  connection.onRequest('soak/finish', async () => {
    // Everything but this request itself must be answered, and every request of ours too.
    await drain(
      () => checker.outstanding() <= 1 && connection.pendingCount === 0,
      () => `${checker.outstanding()} outstanding on the peer`,
      { progress: () => checker.lineCount },
    );
    const finish: PeerFinish = {
      checker: checker.report(),
      sender,
      pendingCount: connection.pendingCount,
      inflightCount: connection.inflightCount - 1,
    };
    return finish as unknown as JsonValue;
  });
}
