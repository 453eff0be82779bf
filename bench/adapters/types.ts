/**
 * What the benchmark needs from each library: a client that sends, and a server that answers the
 * bench protocol, both over a pair of Node streams.
 *
 * @packageDocumentation
 */
import type { Readable, Writable } from 'node:stream';

/** One request started so that it can be cancelled mid-flight. */
export interface CancellableCall {
  /** Resolves with the answer's error code, or `0` for a success answer. Never rejects. */
  readonly settled: Promise<number>;
  /** Cancels the request the library's way. */
  cancel(): void;
}

/** The client side of one library, as the workloads drive it. */
export interface BenchClient {
  /** Sends a request; resolves with the result, rejects on an error answer. */
  request(method: string, params?: unknown): PromiseLike<unknown>;
  /** Sends a notification without waiting for anything. */
  notify(method: string, params?: unknown): void;
  /** Starts a request that the caller will cancel. */
  startCancellable(method: string, params?: unknown): CancellableCall;
  /** Closes the connection (not the transport). */
  close(): Promise<void>;
}

/** The server side of one library. */
export interface BenchServer {
  /** Closes the connection. */
  close(): Promise<void>;
}

/** One library under test. */
export interface Library {
  /** Its name in tables and file names (`bench/servers/<name>.js`). */
  readonly name: LibraryName;
  /** Connects a client over the streams. */
  client(input: Readable, output: Writable): BenchClient;
  /** Serves the bench protocol over the streams. */
  serve(input: Readable, output: Writable): BenchServer;
}

/** The libraries compared. */
export type LibraryName = 'raw' | 'acp-wire' | 'vscode-jsonrpc' | 'acp-sdk';

/** Maps a settled request to its error code (`0` for success). */
export function codeOf(request: PromiseLike<unknown>): Promise<number> {
  return Promise.resolve(request).then(
    () => 0,
    (error: unknown) => {
      const code = (error as { code?: unknown } | undefined)?.code;
      return typeof code === 'number' ? code : -1;
    },
  );
}
