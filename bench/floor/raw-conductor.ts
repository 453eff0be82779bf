/**
 * A conductor with no library, the floor of `acp-wire conduct` on stdio: spawns each command
 * first (`node raw-conductor.js "<proxy>"… "<agent>"`, split on spaces), then routes requests hop
 * by hop under new ids: the client's to the first component; a proxy's `proxy/successor` request
 * unwrapped to the next one; `initialize` as `proxy/initialize` to a proxy. Answers go back to
 * where each request came from. Enough to time a chain's first `initialize` without any library:
 * no notifications, no requests toward the client, no shutdown beyond ending each child's stdin
 * when the client's ends.
 *
 * @packageDocumentation
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { type RawMessage, readLines, writeLine } from './lines';

// Each child in a session of its own, as acp-wire's conductor spawns them outside Windows: where the
// scheduler shares the processor between sessions (Linux's autogroups), both chains then get alike.
const children: ChildProcess[] = process.argv.slice(2).map((command) => {
  const [program, ...args] = command.split(' ');
  return spawn(program!, args, { stdio: ['pipe', 'pipe', 'inherit'], detached: process.platform !== 'win32' });
});
let nextId = 0;
/** Each request forwarded, by its new id: where its answer goes, under which id. */
const waiting = new Map<number, { to: Writable; id: RawMessage['id'] }>();

function forward(index: number, method: string, params: unknown, to: Writable, id: RawMessage['id']): void {
  const isProxy = index < children.length - 1;
  waiting.set(nextId, { to, id });
  writeLine(children[index]!.stdin!, { id: nextId++, method: method === 'initialize' && isProxy ? 'proxy/initialize' : method, params });
}

function answer(message: RawMessage): void {
  const entry = waiting.get(message.id as number);
  if (!entry) return;
  waiting.delete(message.id as number);
  writeLine(entry.to, 'error' in message ? { id: entry.id, error: message.error } : { id: entry.id, result: message.result });
}

readLines(process.stdin, (message) => {
  if (message.method !== undefined && message.id !== undefined) forward(0, message.method, message.params, process.stdout, message.id);
});
process.stdin.on('end', () => {
  for (const child of children) child.stdin!.end();
});
for (const [index, child] of children.entries()) {
  readLines(child.stdout!, (message) => {
    if (message.method === undefined) return answer(message);
    if (message.method === 'proxy/successor' && message.id !== undefined && message.params?.method !== undefined) {
      forward(index + 1, message.params.method, message.params.params, child.stdin!, message.id);
    }
  });
}
