/** A raw TCP client for specs: a socket to 127.0.0.1 spoken to with raw NDJSON lines. */
import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { LineReader, requestLine, writeLines } from './lines';

/** A raw TCP socket with its incoming lines read. */
export interface RawSocket {
  readonly socket: Socket;
  /** The lines the server wrote. */
  readonly lines: LineReader;
  /** Writes each item as one line (a string as it is, anything else as JSON). */
  send(...items: unknown[]): void;
  /** Sends a request and resolves with the exact line of its response (taken from {@link RawSocket.lines}). */
  request(id: number | string, method: string, params?: unknown): Promise<string>;
  /** Ends our side and resolves once the socket has closed. */
  close(): Promise<void>;
}

/** Connects a raw socket to `127.0.0.1:port`. */
export async function connectRaw(port: number): Promise<RawSocket> {
  const socket = createConnection({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  const closed = once(socket, 'close').then(() => undefined);
  const lines = new LineReader(socket, { label: `socket to port ${port}` });
  return {
    socket,
    lines,
    send: (...items) => writeLines(socket, ...items),
    request: (id, method, params) => requestLine(socket, lines, id, method, params),
    close: () => {
      socket.end();
      return closed;
    },
  };
}
