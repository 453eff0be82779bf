/**
 * Checks one connection's traffic, line by line, against the rules every hop must keep: each
 * request gets exactly one response, at most one `$/cancel_request` per request, none after the
 * response was routed, and (for soak requests) the answer the handler's behaviour implies.
 *
 * @remarks
 * Feed it either as the connection's `logger` (it reads the `-> line` / `<- line` trace records a
 * connection writes, in the order the connection sends and receives) or with
 * {@link TraceChecker.observe} from taps on the streams (then pass `strictOrder: false`: a cancel
 * enqueued before the response arrived may be flushed after it).
 */
import type { LogLevel, Logger } from '../../lib';

const CANCEL = '$/cancel_request';
const SOAK_METHOD = 'soak/work';
const DROPPED_DATA = 'request handler dropped its responder for `soak/work`';
const MAX_VIOLATIONS = 20;

interface OutRequest {
  cancels: number;
  responses: number;
}

interface InRequest {
  method: string;
  params: unknown;
  responses: number;
  cancelled: boolean;
}

/** A summary of what a {@link TraceChecker} saw. */
export interface CheckerReport {
  requestsOut: number;
  requestsIn: number;
  cancelsOut: number;
  cancelsIn: number;
  /** Requests sent that have no response yet. */
  unansweredOut: number;
  /** Requests received that have no response yet. */
  unansweredIn: number;
  /** Responses sent, by kind: `result` or the error code. */
  answers: Record<string, number>;
  violationCount: number;
  /** The first violations, in order. */
  violations: string[];
}

/** Options of a {@link TraceChecker}. */
export interface TraceCheckerOptions {
  /**
   * The lines come in the connection's own order (its trace): a cancel seen after its response is
   * a violation, and soak answers are checked against the cancellation seen before them.
   * Default `true`.
   */
  strictOrder?: boolean;
  /**
   * The soak handler answers on this connection, so each soak answer is checked against its
   * behaviour. Default `true`; `false` for a hop that only forwards answers made elsewhere.
   */
  handlesSoak?: boolean;
  /** Where non-trace records go (default: dropped). */
  forward?: (level: LogLevel, message: string) => void;
}

type Direction = '->' | '<-';

/** See the file comment. */
export class TraceChecker implements Logger {
  readonly traces = true;
  readonly #strict: boolean;
  readonly #handlesSoak: boolean;
  readonly #forward: ((level: LogLevel, message: string) => void) | undefined;
  readonly #out = new Map<string, OutRequest>();
  readonly #in = new Map<string, InRequest>();
  readonly #answers: Record<string, number> = {};
  readonly #cancelsInById = new Map<string, number>();
  readonly #violations: string[] = [];
  #violationCount = 0;
  #cancelsOut = 0;
  #cancelsIn = 0;
  #unansweredOut = 0;
  #unansweredIn = 0;
  #lineCount = 0;

  constructor(options: TraceCheckerOptions = {}) {
    this.#strict = options.strictOrder ?? true;
    this.#handlesSoak = options.handlesSoak ?? true;
    this.#forward = options.forward;
  }

  /** The Logger side: reads trace records, forwards the rest. */
  log(level: LogLevel, message: string): void {
    if (level !== 'trace') return this.#forward?.(level, message);
    const direction = message.slice(0, 2);
    if (direction === '->' || direction === '<-') this.observe(direction, message.slice(3));
  }

  /** Records one line sent (`->`) or received (`<-`). */
  observe(direction: Direction, line: string): void {
    this.#lineCount++;
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return this.#violate(`${direction} a line that is not JSON: ${line.slice(0, 80)}`);
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return;
    const hasId = Object.hasOwn(message, 'id');
    if (typeof message.method === 'string') {
      if (hasId) this.#request(direction, message);
      else if (message.method === CANCEL) this.#cancel(direction, message);
    } else if (hasId) {
      this.#response(direction, message);
    }
  }

  /** Lines seen so far. */
  get lineCount(): number {
    return this.#lineCount;
  }

  /** Requests in either direction still without a response. */
  outstanding(): number {
    return this.#unansweredOut + this.#unansweredIn;
  }

  /** A summary (also lists requests left unanswered as violations' context). */
  report(): CheckerReport {
    return {
      requestsOut: this.#out.size,
      requestsIn: this.#in.size,
      cancelsOut: this.#cancelsOut,
      cancelsIn: this.#cancelsIn,
      unansweredOut: this.#unansweredOut,
      unansweredIn: this.#unansweredIn,
      answers: { ...this.#answers },
      violationCount: this.#violationCount,
      violations: [...this.#violations],
    };
  }

  #request(direction: Direction, message: Record<string, unknown>): void {
    const key = JSON.stringify(message.id);
    if (direction === '->') {
      if (this.#out.has(key)) return this.#violate(`sent a second request with id ${key}`);
      this.#out.set(key, { cancels: 0, responses: 0 });
      this.#unansweredOut++;
    } else {
      if (this.#in.has(key)) return this.#violate(`received a second request with id ${key}`);
      this.#in.set(key, { method: message.method as string, params: message.params, responses: 0, cancelled: false });
      this.#unansweredIn++;
    }
  }

  #cancel(direction: Direction, message: Record<string, unknown>): void {
    const key = JSON.stringify((message.params as { requestId?: unknown } | undefined)?.requestId);
    if (direction === '<-') {
      this.#cancelsIn++;
      // The sender's at-most-once rule, as far as the receiving side can see it.
      const count = (this.#cancelsInById.get(key) ?? 0) + 1;
      this.#cancelsInById.set(key, count);
      if (count > 1) this.#violate(`received cancel #${count} for ${key}`);
      const request = this.#in.get(key);
      if (request && request.responses === 0) request.cancelled = true;
      return;
    }
    this.#cancelsOut++;
    const request = this.#out.get(key);
    if (!request) return this.#violate(`sent a cancel for ${key}, which was never sent`);
    if (++request.cancels > 1) this.#violate(`sent cancel #${request.cancels} for ${key}`);
    if (this.#strict && request.responses > 0) this.#violate(`sent a cancel for ${key} after its response was routed`);
  }

  #response(direction: Direction, message: Record<string, unknown>): void {
    const key = JSON.stringify(message.id);
    if (direction === '<-') {
      const request = this.#out.get(key);
      if (!request) return this.#violate(`received a response for ${key}, which was never sent`);
      if (++request.responses > 1) return this.#violate(`received response #${request.responses} for ${key}`);
      this.#unansweredOut--;
      return;
    }
    const request = this.#in.get(key);
    if (!request) return this.#violate(`sent a response for ${key}, which was never received`);
    if (++request.responses > 1) return this.#violate(`sent response #${request.responses} for ${key}`);
    this.#unansweredIn--;
    const kind = answerKind(message);
    this.#answers[kind] = (this.#answers[kind] ?? 0) + 1;
    // Only the connection's own order tells whether the cancel arrived before the answer was made.
    if (this.#strict && this.#handlesSoak && request.method === SOAK_METHOD) this.#checkSoakAnswer(key, request, message);
  }

  #checkSoakAnswer(key: string, request: InRequest, message: Record<string, unknown>): void {
    const expected = expectedAnswer((request.params as { b?: string } | undefined)?.b, request.cancelled);
    const actual = JSON.stringify('error' in message ? { error: message.error } : { result: message.result });
    if (actual !== expected) {
      this.#violate(
        `answered ${key} (${JSON.stringify(request.params)}, cancelled ${request.cancelled}) with ${actual}, expected ${expected}`,
      );
    }
  }

  #violate(text: string): void {
    this.#violationCount++;
    if (this.#violations.length < MAX_VIOLATIONS) this.#violations.push(text);
  }
}

function answerKind(message: Record<string, unknown>): string {
  const error = message.error as { code?: unknown } | undefined;
  return error === undefined ? 'result' : String(error.code);
}

/** The exact answer (as `{result}` or `{error}` JSON) a soak behaviour gives. */
function expectedAnswer(behaviour: string | undefined, cancelled: boolean): string {
  const ok = { result: { ok: true } };
  const cancelledError = { error: { code: -32800, message: 'Request cancelled' } };
  const dropped = cancelled ? cancelledError : { error: { code: -32603, message: 'Internal error', data: DROPPED_DATA } };
  switch (behaviour) {
    case 'honour':
      return JSON.stringify(cancelled ? cancelledError : ok);
    case 'partial':
      return JSON.stringify(cancelled ? { result: { partial: true } } : ok);
    case 'dispose':
    case 'drop':
      return JSON.stringify(dropped);
    case 'throw':
      return JSON.stringify({ error: { code: -32001, message: 'soak failure' } });
    case 'throwPlain':
      return JSON.stringify({ error: { code: -32603, message: 'Internal error', data: 'Error: plain' } });
    default:
      return JSON.stringify(ok);
  }
}
