/**
 * Reading an event stream (`sseEventData`, on the one `SseParser` of the HTTP client, the MCP
 * server library adapter and the bridge's stdio relay): each event's data as it ends.
 */
import { expect } from 'chai';
import { sseEventData } from '../../lib/transports/remote/sse';
import { seededRandom } from '../helpers/random';

async function eventsOf(chunks: readonly (string | Uint8Array)[], maxBytes = 1024): Promise<string[]> {
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const chunk of chunks) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  }
  const events: string[] = [];
  for await (const data of sseEventData(body(), maxBytes)) events.push(data);
  return events;
}

describe('sseEventData()', () => {
  it('yields the joined data lines of each event, across chunk boundaries and every line end', async () => {
    expect(await eventsOf(['data: a\r', '\ndata: b\n\n: keep-alive\n\nid: 7\rdata:c\r\r'])).to.deep.equal(['a\nb', 'c']);
  });

  it('yields a last event that ends without its blank line, and a last line without its line end', async () => {
    expect(await eventsOf(['data: one\n\ndata: two\n'])).to.deep.equal(['one', 'two']);
    expect(await eventsOf(['data: one\n\ndata: tw', 'o'])).to.deep.equal(['one', 'two']);
  });

  it('throws RangeError for an event over maxBytes', async () => {
    const error = await eventsOf([`data: ${'x'.repeat(64)}\n\n`], 16).then(undefined, (e: unknown) => e);
    expect(error).to.be.instanceOf(RangeError);
  });

  it('yields exactly the events written, for 300 seeded streams of mixed line ends cut into chunks anywhere (inside a CRLF or a UTF-8 character too)', async () => {
    const random = seededRandom(7);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const characters = ['a', 'b', ' ', ':', '{', '"', 'é', '€', '😀'];
    for (let stream = 0; stream < 300; stream++) {
      const expected: string[] = [];
      let text = '';
      let previousEnd = '';
      // A blank line right after a CR that ends with LF would be read as that CR's CRLF.
      const end = (isBlank: boolean): string =>
        (previousEnd = isBlank && previousEnd === '\r' ? pick(['\r', '\r\n']) : pick(['\n', '\r\n', '\r']));
      for (let event = 1 + Math.floor(random() * 4); event > 0; event--) {
        const lines = Array.from({ length: 1 + Math.floor(random() * 3) }, () =>
          Array.from({ length: Math.floor(random() * 12) }, () => pick(characters)).join(''),
        );
        if (random() < 0.3) text += `: keep-alive${end(false)}`;
        if (random() < 0.5) text += `id: ${stream}${end(false)}`;
        for (const line of lines) text += `data: ${line}${end(false)}`;
        text += end(true);
        expected.push(lines.join('\n'));
      }
      const bytes = Buffer.from(text);
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + Math.floor(random() * 12);
        chunks.push(bytes.subarray(at, at + size));
        at += size;
      }
      expect(await eventsOf(chunks), JSON.stringify(text)).to.deep.equal(expected);
    }
  });
});
