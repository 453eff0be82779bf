/**
 * The WebSocket side of the remote server: completes the upgrades the server admitted and hands
 * each socket over as a client's stream, or, with resumption, to the connection it resumes.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { DEFAULT_MAX_PAYLOAD } from '../limits';
import { HEADER_CONNECTION_ID, type RemoteClientInfo, type RemoteConnectionOptions } from '../remote-connection';
import { ResumableWebSockets } from '../resume/resumable-websocket';
import { resumeSettings, type ResumeOptions } from '../resume/resume-options';
import { webSocketStream } from './websocket';

/** What the WebSocket side of a server reads of its options. @internal */
export interface WebSocketServerOptions extends RemoteConnectionOptions {
  /** Resumable connections (see the remote server's `resume`). */
  resume?: ResumeOptions | boolean;
}

/** Where the WebSocket side hands its clients: each new one's stream; the upgrade of a socket that only resumed one. @internal */
export interface WebSocketSink {
  onStream(stream: Duplex, info: RemoteClientInfo): void;
  release(request: IncomingMessage): void;
}

/**
 * The WebSocket side: completes admitted upgrades and hands each socket over as a stream (with
 * `resume`, the connection's stream once its first frame shows it is not resuming another).
 *
 * @internal
 */
export function webSocketServer(options: WebSocketServerOptions, sink: WebSocketSink) {
  const resumable = resumeSettings(options.resume);
  const sockets = resumable ? new ResumableWebSockets(resumable) : undefined;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayload ?? DEFAULT_MAX_PAYLOAD,
    perMessageDeflate: false,
    clientTracking: false,
  });
  const ids = new WeakMap<IncomingMessage, string>();
  wss.on('headers', (headers, request) => {
    const id = ids.get(request);
    if (id !== undefined) headers.push(`${HEADER_CONNECTION_ID}: ${id}`);
  });
  return {
    /** Whether `request` names (`Acp-Connection-Id`) a resumable connection this server holds. */
    isResuming(request: IncomingMessage): boolean {
      const id = request.headers[HEADER_CONNECTION_ID.toLowerCase()];
      return sockets !== undefined && typeof id === 'string' && sockets.holds(id);
    },
    /** Completes an upgrade; `resumeOnly`: one that was not admitted as a new client, whose first frame must resume. */
    accept(request: IncomingMessage, socket: Socket, head: Buffer, resumeOnly = false): void {
      const connectionId = randomUUID();
      if (!resumeOnly) ids.set(request, connectionId);
      wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
        const info: RemoteClientInfo = { transport: 'websocket', request, connectionId };
        const stream = webSocketStream(ws, socket, options);
        if (!sockets) return sink.onStream(stream, info);
        const handlers = { onNew: (durable: Duplex) => sink.onStream(durable, info), onNotNew: () => sink.release(request) };
        sockets.accept(stream, resumeOnly ? undefined : connectionId, handlers);
      });
    },
  };
}
