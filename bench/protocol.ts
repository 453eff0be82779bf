/**
 * The small protocol every benchmark server speaks, whatever its library: method names, the
 * payloads of each workload and the shared server state.
 *
 * @packageDocumentation
 */

/** Echoes its params back as the result. */
export const ECHO = 'bench/echo';
/** A notification the server counts. */
export const NOTE = 'bench/note';
/** Answers how many {@link NOTE}s arrived since the last call, and resets the count. */
export const COUNT = 'bench/count';
/** Never answers until cancelled; then answers `-32800`. */
export const WAIT = 'bench/wait';
/** Held unanswered until a {@link RELEASE} notification. */
export const HOLD = 'bench/hold';
/** Notification: answer every held request with `null`. */
export const RELEASE = 'bench/release';
/** Answers the server process's {@link ServerStats} (params `{gc: true}` collects first). */
export const STATS = 'bench/stats';

/** The code of a cancelled answer on every library's wire. */
export const REQUEST_CANCELLED = -32800;

/** What a server process reports about itself. */
export interface ServerStats {
  /** CPU time used so far (user + system), in microseconds. */
  cpuUs: number;
  /** Peak resident set size so far, in bytes. */
  maxRssBytes: number;
  /** V8 heap in use, in bytes (after a full collection when asked). */
  heapUsed: number;
  /** Requests currently held by {@link HOLD}. */
  held: number;
}

/** Params of {@link STATS}. */
export interface StatsParams {
  gc?: boolean;
}

/** The small params of a round trip: a realistic tiny ACP-like object. */
export const SMALL_PARAMS = Object.freeze({ sessionId: 'sess_0123456789', value: 42, ok: true });

/** The params of a one-way notification. */
export const NOTE_PARAMS = Object.freeze({ sessionId: 'sess_0123456789', update: { kind: 'tick', n: 1 } });

/**
 * State shared by all servers: the notification counter and the held requests.
 *
 * @remarks Each library adapter wires its handlers to these methods, so every server does the
 * same work per message.
 */
export class ServerState {
  #notes = 0;
  #held: (() => void)[] = [];

  /** Counts one {@link NOTE}. */
  note(): void {
    this.#notes++;
  }

  /** The number of notes since the last call; resets it. */
  takeCount(): number {
    const count = this.#notes;
    this.#notes = 0;
    return count;
  }

  /** Keeps `release` until {@link ServerState.releaseAll}. */
  hold(release: () => void): void {
    this.#held.push(release);
  }

  /** Answers every held request. */
  releaseAll(): void {
    const held = this.#held;
    this.#held = [];
    for (const release of held) release();
  }

  /** This process's {@link ServerStats}; with `{gc: true}` after {@link settledHeap}. */
  async stats(params: unknown): Promise<ServerStats> {
    const heapUsed = (params as StatsParams | undefined)?.gc ? await settledHeap() : process.memoryUsage().heapUsed;
    const cpu = process.cpuUsage();
    return {
      cpuUs: cpu.user + cpu.system,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      heapUsed,
      held: this.#held.length,
    };
  }
}

/**
 * The heap in use once collections stop freeing memory: a full collection, a pause for the
 * finalizers it queued (they release what they hold), again, until the heap shrinks by < 16 KiB
 * (at most five collections).
 * Needs `--expose-gc`; without it, the heap as is.
 */
export async function settledHeap(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  let heap = process.memoryUsage().heapUsed;
  if (!gc) return heap;
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const now = process.memoryUsage().heapUsed;
    const shrunk = heap - now;
    heap = now;
    if (i > 0 && shrunk < 16 * 1024) break;
  }
  return heap;
}

/** A random-looking ASCII string of exactly `length` characters (deterministic). */
export function asciiPayload(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/ ';
  const parts: string[] = [];
  let seed = 12345;
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    parts.push(alphabet[seed % alphabet.length]!);
  }
  return parts.join('');
}

/** An object whose JSON is about `bytes` long: an array of small records, like a file listing. */
export function objectPayload(bytes: number): { entries: unknown[] } {
  const entries: unknown[] = [];
  let size = 14;
  for (let i = 0; size < bytes; i++) {
    const entry = {
      path: `src/module-${i}/file-${i}.ts`,
      size: i * 37,
      kind: i % 3 === 0 ? 'dir' : 'file',
      tags: ['a', 'b'],
      meta: { ok: true, mtime: 1700000000 + i },
    };
    size += JSON.stringify(entry).length + (entries.length > 0 ? 1 : 0);
    entries.push(entry);
  }
  return { entries };
}
