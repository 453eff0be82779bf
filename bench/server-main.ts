/**
 * The body of every `bench/servers/<library>.js` program: serve the bench protocol over this
 * process's stdio (`stdio`), over one TCP connection on loopback (`tcp`), or over WebSocket on
 * loopback (`websocket`).
 *
 * @remarks In `tcp` mode the program prints its port as the first stdout line and exits when its
 * stdin ends (the parent closed it or died). Logs go to stderr only.
 *
 * @packageDocumentation
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Library } from './adapters';
import { WEBSOCKET_ADAPTERS } from './adapters/websocket';

/** Runs `library`'s bench server in the mode named by `process.argv[2]`. */
export function runServer(library: Library): void {
  const mode = process.argv[2];
  if (mode === 'stdio') return serveStdio(library);
  if (mode === 'tcp') return serveTcp(library);
  if (mode === 'websocket') return void serveWebSocket(library);
  process.stderr.write(`usage: ${library.name} stdio|tcp|websocket\n`);
  process.exitCode = 2;
}

function serveStdio(library: Library): void {
  const server = library.serve(process.stdin, process.stdout);
  process.stdin.once('end', () => {
    void server.close().finally(() => process.exit(0));
  });
}

function serveTcp(library: Library): void {
  const sockets = new Set<Socket>();
  const listener = createServer((socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.once('close', () => sockets.delete(socket));
    library.serve(socket, socket);
  });
  listener.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${(listener.address() as AddressInfo).port}\n`);
  });
  process.stdin.resume();
  process.stdin.once('end', () => {
    for (const socket of sockets) socket.destroy();
    listener.close(() => process.exit(0));
  });
}

async function serveWebSocket(library: Library): Promise<void> {
  const adapter = WEBSOCKET_ADAPTERS[library.name];
  if (!adapter) {
    process.stderr.write(`${library.name} has no WebSocket transport\n`);
    process.exitCode = 2;
    return;
  }
  const server = await adapter.listen();
  process.stdout.write(`${server.port}\n`);
  process.stdin.resume();
  process.stdin.once('end', () => {
    void server.close().finally(() => process.exit(0));
  });
}
