/**
 * The WebSocket transport of the benchmark (one JSON-RPC message per text frame): acp-wire's
 * `connectWebSocket`/`listenRemote`, the SDK's `createWebSocketStream`, and a raw `ws` baseline
 * (`JSON.stringify` per frame out, `JSON.parse` per frame in, no library).
 *
 * @remarks The SDK ships no bench-usable WebSocket server stream (its `AcpServer` wants an ACP
 * `initialize` first), so its server side is the SDK agent app over a minimal message stream on a
 * `ws` socket: the same frame-per-message work its client stream does.
 *
 * @packageDocumentation
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import type { Stream } from '@agentclientprotocol/sdk';
import WebSocket, { WebSocketServer } from 'ws';
import { connectWebSocket, listenRemoteStreams } from '../../lib';
import { sdkClient, sdkServe } from './acp-sdk';
import { acpWire } from './acp-wire';
import { rawClient, rawServer, type Wire } from './raw';
import { codeOf, type BenchClient, type LibraryName } from './types';

/** A running bench server. */
export interface WebSocketBenchServer {
  readonly port: number;
  close(): Promise<void>;
}

/** How one library runs over WebSocket. */
export interface WebSocketAdapter {
  /** Connects a client to `url`. */
  client(url: string): Promise<BenchClient>;
  /** Serves the bench protocol on 127.0.0.1 (a free port), path `/acp`. */
  listen(): Promise<WebSocketBenchServer>;
}

/** A plain `ws` server on 127.0.0.1; `onSocket` gets each accepted socket. */
async function wsServer(onSocket: (ws: WebSocket) => void): Promise<WebSocketBenchServer> {
  const http = createServer();
  const wss = new WebSocketServer({ server: http, perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });
  wss.on('connection', onSocket);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    port: (http.address() as AddressInfo).port,
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => http.close(() => resolve())));
    },
  };
}

function opened(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
}

const raw: WebSocketAdapter = {
  async client(url) {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await opened(ws);
    const { client, receive } = rawClient(
      (message) => ws.send(JSON.stringify(message)),
      async () => ws.close(),
    );
    ws.on('message', (data: Buffer) => receive(JSON.parse(data.toString('utf8')) as Wire));
    return client;
  },
  listen: () =>
    wsServer((ws) => {
      const receive = rawServer((message) => ws.send(JSON.stringify(message)));
      ws.on('message', (data: Buffer) => receive(JSON.parse(data.toString('utf8')) as Wire));
    }),
};

const wire: WebSocketAdapter = {
  async client(url) {
    const connection = await connectWebSocket(url, { heartbeat: false });
    return {
      request: (method, params) => connection.sendRequest(method, params),
      notify: (method, params) => connection.sendNotification(method, params),
      startCancellable(method, params) {
        const sent = connection.sendRequest(method, params);
        return { settled: codeOf(sent), cancel: () => void sent.cancel() };
      },
      close: () => connection.close(),
    };
  },
  async listen() {
    const listener = await listenRemoteStreams({ transports: ['websocket'], heartbeat: false }, (stream) => {
      const server = acpWire.serve(stream, stream);
      stream.once('end', () => void server.close().then(() => stream.destroy()));
    });
    return { port: listener.port, close: () => listener.close() };
  },
};

/** A message stream over a server-side `ws` socket, for the SDK agent app. */
function sdkServerStream(ws: WebSocket): Stream {
  return {
    readable: new ReadableStream({
      start(controller) {
        ws.on('message', (data: Buffer) => controller.enqueue(JSON.parse(data.toString('utf8'))));
        ws.once('close', () => controller.close());
      },
    }),
    writable: new WritableStream({
      write: (message) => ws.send(JSON.stringify(message)),
      close: () => ws.close(),
    }),
  } as Stream;
}

const sdk: WebSocketAdapter = {
  async client(url) {
    return sdkClient(createWebSocketStream(url, { WebSocket: WebSocket as never }) as Stream);
  },
  listen: () => wsServer((ws) => void sdkServe(sdkServerStream(ws))),
};

/** The libraries that run over WebSocket. */
export const WEBSOCKET_ADAPTERS: Partial<Record<LibraryName, WebSocketAdapter>> = { raw, 'acp-wire': wire, 'acp-sdk': sdk };
