/**
 * A flaky network on one machine, to try resumption: a TCP proxy on 127.0.0.1 that forwards
 * every connection to a target port and resets it (TCP RST both ways) a fixed time after it
 * opened, as a dropped Wi-Fi or a restarted NAT would.
 *
 * Usage: `node dist/examples/flaky-proxy.js LISTEN_PORT TARGET_PORT [RESET_AFTER_MS]` (default
 * 1000 ms). Prints `proxying 127.0.0.1:LISTEN_PORT -> 127.0.0.1:TARGET_PORT`, then one line per
 * reset on stderr. Stop it with Ctrl-C.
 *
 * @packageDocumentation
 */
import { createConnection, createServer } from 'node:net';

function main([listenPort, targetPort, afterMs = '1000']: string[]): void {
  if (listenPort === undefined || targetPort === undefined) {
    process.stderr.write('usage: flaky-proxy LISTEN_PORT TARGET_PORT [RESET_AFTER_MS]\n');
    process.exitCode = 2;
    return;
  }
  let count = 0;
  const server = createServer((client) => {
    const target = createConnection({ host: '127.0.0.1', port: Number(targetPort) });
    const reset = setTimeout(() => {
      process.stderr.write(`reset connection ${++count}\n`);
      client.resetAndDestroy();
      target.resetAndDestroy();
    }, Number(afterMs));
    for (const socket of [client, target]) {
      socket.on('error', () => {});
      socket.once('close', () => {
        clearTimeout(reset);
        client.destroy();
        target.destroy();
      });
    }
    client.pipe(target);
    target.pipe(client);
  });
  server.listen(Number(listenPort), '127.0.0.1', () => {
    process.stdout.write(`proxying 127.0.0.1:${listenPort} -> 127.0.0.1:${targetPort}\n`);
  });
}

main(process.argv.slice(2));
