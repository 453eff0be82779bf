/**
 * Self-contained helpers of the remote-transport specs: a raw WebSocket client that sees exact
 * frames, the echo handlers of the wire cases, and a check that nothing is left open.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import WebSocket from 'ws';
import { RpcError, type Connection, type JsonValue } from '../../lib';
import { LineReader, writeLines } from '../helpers/lines';

/** How a WebSocket closed, as its client saw it. */
export interface CloseEvent {
  readonly code: number;
  readonly reason: string;
}

/** A raw `ws` client: each text frame received is one collected line; `send` sends one frame per item. */
export interface RawWebSocket {
  readonly ws: WebSocket;
  readonly lines: LineReader;
  /** Resolves when the socket has closed, with the close code the client saw. */
  readonly closed: Promise<CloseEvent>;
  /** Sends each item as one text frame (strings as they are, anything else JSON-encoded). */
  send(...items: unknown[]): void;
  /** Closes (1000) and resolves once closed. */
  close(): Promise<CloseEvent>;
}

/** Opens a raw WebSocket to `url`; `options` go to `ws` (headers, ...). */
export async function connectRawWebSocket(url: string, options: WebSocket.ClientOptions = {}): Promise<RawWebSocket> {
  const ws = new WebSocket(url, { perMessageDeflate: false, ...options });
  const frames = new PassThrough();
  const lines = new LineReader(frames, { label: 'raw WebSocket' });
  ws.on('message', (data: Buffer, isBinary) => {
    if (!isBinary) writeLines(frames, data.toString('utf8'));
  });
  const closed = new Promise<CloseEvent>((resolve) =>
    ws.once('close', (code, reason) => {
      frames.end();
      resolve({ code, reason: reason.toString('utf8') });
    }),
  );
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_request, response) => {
      ws.terminate();
      reject(new Error(`unexpected response ${response.statusCode}`));
    });
    ws.once('error', reject);
  });
  return {
    ws,
    lines,
    closed,
    send: (...items) => {
      for (const item of items) ws.send(typeof item === 'string' ? item : JSON.stringify(item));
    },
    close: () => {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000);
      return closed;
    },
  };
}

/** The status code a WebSocket upgrade to `url` is refused with (rejects if it is accepted). */
export async function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  ws.on('error', () => {});
  const [, response] = (await Promise.race([once(ws, 'unexpected-response'), once(ws, 'open')])) as [
    unknown,
    import('node:http').IncomingMessage?,
  ];
  if (!response) {
    ws.terminate();
    throw new Error('the upgrade was accepted');
  }
  let body = '';
  response.setEncoding('utf8');
  for await (const chunk of response) body += chunk as string;
  ws.terminate();
  return { status: response.statusCode!, body };
}

interface ThrowParams {
  code: number;
  message: string;
  data?: JsonValue;
}

/** The echo peer's handlers (spec/fixtures/echo-peer.ts) on an in-process connection. */
export function serveEcho(connection: Connection): void {
  const notifications: string[] = [];
  connection.onAnyNotification((_params, message) => void notifications.push(message.method));
  connection.onRequest('echo', (params: unknown) => params ?? null);
  connection.onRequest('sleep', ({ ms }: { ms: number }, responder) => {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ slept: ms }), ms);
      responder.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve({ slept: 'cancelled' });
      });
    });
  });
  connection.onRequest('throw', ({ code, message, data }: ThrowParams) => {
    throw new RpcError(code, message, data);
  });
  connection.onRequest('throwPlain', ({ message }: { message: string }) => {
    throw new Error(message);
  });
  connection.onRequest('notifications', () => notifications.slice());
}

/** Resolves with the reason and error of a connection's close. */
export function closeOf(connection: Connection): Promise<{ reason: string; error?: Error }> {
  if (connection.isClosed) return Promise.resolve({ reason: connection.closeReason! });
  return new Promise((resolve) => connection.once('close', (reason, error) => resolve({ reason, error })));
}

/** Counts this process's open TCP handles (sockets and servers). */
export function tcpHandles(): number {
  return process.getActiveResourcesInfo().filter((name) => name.startsWith('TCP')).length;
}

/**
 * Asserts that the open TCP handles are back to `baseline`, allowing closing sockets a few
 * event-loop turns to be released (a socket's handle goes away one turn after its 'close').
 */
export async function expectTcpHandles(baseline: number): Promise<void> {
  for (let turn = 0; turn < 50 && tcpHandles() > baseline; turn++) await nextMacrotask();
  expect(tcpHandles(), `open TCP handles: ${process.getActiveResourcesInfo().join(', ')}`).to.equal(baseline);
}
