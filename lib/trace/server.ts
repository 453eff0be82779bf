/**
 * The trace viewer's HTTP server: serves the sequence-diagram page and the events of a trace file
 * or of a live {@link TraceStore}, on 127.0.0.1 only.
 *
 * @packageDocumentation
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TraceEvent } from './events';
import { readTraceFile } from './file';
import type { TraceStore } from './store';

/** Options of {@link serveTraceViewer}: exactly one of `file` and `store`. */
export interface TraceViewerOptions {
  /** A trace file, read again on every poll, so the page follows a capture as it grows. */
  file?: string;
  /** A live store (e.g. filled by a conductor's `onTraceEvent`). */
  store?: TraceStore;
  /** The port on 127.0.0.1. Default 0: a free port. */
  port?: number;
}

/** A running viewer server. */
export interface TraceViewer {
  /** The page's address, e.g. `http://127.0.0.1:43117/`. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** Stops listening and closes open connections. Idempotent. */
  close(): Promise<void>;
  /** Same as {@link TraceViewer.close}. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The page's security headers: the page itself may load nothing from anywhere but this server,
 * so it can make no request off 127.0.0.1.
 */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * Serves the trace viewer on `127.0.0.1`.
 *
 * @remarks
 * - `GET /` is the page: one swimlane per component, an arrow per message, request/response pairs
 *   coloured together, active requests as spans, elapsed times, `session/update` text previews, a
 *   detail panel with the JSON, filters, `$/cancel_request` arrows and automatic answers marked.
 *   It is one self-contained file: no framework, and it requests nothing but this server's
 *   `/poll` (twice a second, so it updates while a chain runs).
 * - `GET /events` answers every event as a JSON array (the Rust viewer's endpoint);
 *   `GET /poll?since=N` answers `{"next", "events", "reset"?}`: the events from number N on.
 * - Only requests whose `Host` is `127.0.0.1:PORT` or `localhost:PORT` are served (a web page
 *   elsewhere cannot read a trace through DNS rebinding); other methods than GET and HEAD get 405.
 *
 * @throws TypeError unless exactly one of `file` and `store` is given; RangeError for a bad port
 * @example
 * ```ts
 * const viewer = await serveTraceViewer({ file: './trace.jsons' });
 * console.log(`open ${viewer.url}`);
 * ```
 */
export async function serveTraceViewer(options: TraceViewerOptions): Promise<TraceViewer> {
  const { file, store } = options;
  if ((file === undefined) === (store === undefined)) throw new TypeError('give exactly one of file and store');
  if (file !== undefined && (typeof file !== 'string' || file === '')) throw new TypeError('file must be a non-empty path');
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError('port must be an integer from 0 to 65535');
  const page = readFileSync(viewerPagePath(), 'utf8');
  const events = file !== undefined ? () => readEvents(file) : undefined;
  const since = (from: number): { events: TraceEvent[]; count: number } => {
    if (store) return { events: store.since(from), count: store.count };
    const all = events!();
    return { events: all.slice(from), count: all.length };
  };
  let listening = 0;
  const server = createServer((request, response) => handle(request, response, { page, since, port: listening }));
  server.listen(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve).once('error', reject);
  });
  listening = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => (closed ??= closeServer(server));
  return { url: `http://127.0.0.1:${listening}/`, port: listening, close, [Symbol.asyncDispose]: close };
}

interface Routes {
  page: string;
  since(from: number): { events: TraceEvent[]; count: number };
  port: number;
}

function handle(request: IncomingMessage, response: ServerResponse, routes: Routes): void {
  const host = request.headers.host;
  if (host !== `127.0.0.1:${routes.port}` && host !== `localhost:${routes.port}`)
    return send(response, 403, 'text/plain', 'forbidden host\n');
  if (request.method !== 'GET' && request.method !== 'HEAD') return send(response, 405, 'text/plain', 'method not allowed\n');
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  if (url.pathname === '/') {
    response.writeHead(200, PAGE_HEADERS);
    response.end(request.method === 'HEAD' ? undefined : routes.page);
    return;
  }
  if (url.pathname === '/events') return sendJson(response, routes.since(0).events);
  if (url.pathname === '/poll') {
    const from = Number(url.searchParams.get('since') ?? 0);
    const start = Number.isInteger(from) && from >= 0 ? from : 0;
    const { events, count } = routes.since(start);
    // A file that was truncated (a new capture) has fewer events than the page has seen: start over.
    if (start > count) return sendJson(response, { next: count, events: routes.since(0).events, reset: true });
    return sendJson(response, { next: count, events });
  }
  send(response, 404, 'text/plain', 'not found\n');
}

function readEvents(file: string): TraceEvent[] {
  try {
    return readTraceFile(file);
  } catch {
    // Not created yet, or unreadable for now: nothing to show.
    return [];
  }
}

function sendJson(response: ServerResponse, value: unknown): void {
  send(response, 200, 'application/json', JSON.stringify(value));
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, {
    'content-type': `${type}; charset=utf-8`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  response.end(body);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** The page: beside this module when run from source, in lib/trace of the package when compiled. */
function viewerPagePath(): string {
  const candidates = [join(__dirname, 'viewer.html'), join(__dirname, '..', '..', '..', 'lib', 'trace', 'viewer.html')];
  return candidates.find((path) => existsSync(path)) ?? candidates[0]!;
}
