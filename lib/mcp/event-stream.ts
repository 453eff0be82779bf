/**
 * Reading a `text/event-stream` body as the JSON values of its `data` fields: what an MCP server
 * library writes when one request's exchange streams notifications before its answer.
 *
 * @packageDocumentation
 */
import type { JsonValue } from '../jsonrpc/message';

/**
 * Yields the parsed `data` of each event of `body`, in order. An event without `data` (a comment,
 * a keep-alive) yields nothing; `\r\n`, `\r` and `\n` all end a line. Stopping early cancels the
 * body.
 *
 * @throws SyntaxError (from the iteration) for an event whose `data` is not JSON
 * @internal
 */
export async function* eventStreamData(body: ReadableStream<Uint8Array>): AsyncGenerator<JsonValue> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A `\r` at the end of a chunk may be the first half of a `\r\n`: keep it for the next one.
      const held = !done && pending.endsWith('\r') ? '\r' : '';
      const lines = (held ? pending.slice(0, -1) : pending).split(/\r\n|\r|\n/);
      // The last piece is a line the chunk boundary may have cut.
      pending = done ? '' : (lines.pop() ?? '') + held;
      for (const line of lines) {
        if (line === '') {
          if (data.length > 0) yield JSON.parse(data.join('\n')) as JsonValue;
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
      }
      if (done) break;
    }
    if (data.length > 0) yield JSON.parse(data.join('\n')) as JsonValue;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
