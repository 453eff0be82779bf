/**
 * `acp-wire serve` as the hosting benchmark runs it: the real command line (`runCli`) in a forked
 * process with `--expose-gc`, answering `'memory'` over IPC with its memory after a full
 * collection. Run as `node --expose-gc dist/bench/hosting-server.js serve …`.
 *
 * @packageDocumentation
 */
import { runCli } from '../lib/cli/main';
import { settledHeap } from './protocol';

/** What the hosting server reports of its own memory. */
export interface HostMemory {
  /** Resident set size of the serve process, in bytes. */
  rss: number;
  /** V8 heap in use after a full collection, in bytes. */
  heapUsed: number;
  /** Memory of C++ objects bound to JavaScript (buffers, sockets), in bytes. */
  external: number;
}

process.on('message', (message: unknown) => {
  if (message !== 'memory') return;
  void settledHeap().then((heapUsed) => {
    const { rss, external } = process.memoryUsage();
    process.send!({ rss, heapUsed, external } satisfies HostMemory);
  });
});
// The IPC channel must not keep serve alive once it has stopped.
process.channel?.unref();

void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
  process.disconnect?.();
});
