/**
 * Reading a `text/event-stream` body: the `data` of each event, as the events arrive.
 *
 * @packageDocumentation
 */

/**
 * Yields the data of each event of an SSE body (its `data:` lines joined with `\n`), as each event
 * ends; events without data are skipped. Lines may end with `\n`, `\r\n` or `\r`.
 */
export async function* sseEventData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  let data: string[] = [];
  const lines = function* (text: string, isLast: boolean): Generator<string> {
    pending += text;
    const parts = pending.split(/\r\n|\r|\n/);
    pending = isLast ? '' : parts.pop()!;
    yield* parts;
  };
  const read = async function* (): AsyncGenerator<string> {
    for await (const chunk of body) yield* lines(decoder.decode(chunk, { stream: true }), false);
    yield* lines(decoder.decode(), true);
    yield '';
  };
  for await (const line of read()) {
    if (line === '') {
      if (data.length > 0) yield data.join('\n');
      data = [];
    } else if (line.startsWith('data:')) {
      data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
  }
}
