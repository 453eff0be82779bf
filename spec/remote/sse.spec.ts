/**
 * Reading an event stream (`sseEventData`, on the one `SseParser` of the HTTP client, the MCP
 * server library adapter and the bridge's stdio relay): each event's data as it ends.
 */
import { expect } from 'chai';
import { sseEventData } from '../../lib/transports/remote/http/sse';
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

  it('drops a byte order mark that starts the stream (also split across chunks), and only there', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    expect(await eventsOf([Buffer.concat([bom, Buffer.from('data: a\n\n')])])).to.deep.equal(['a']);
    expect(await eventsOf([bom.subarray(0, 1), bom.subarray(1), 'data: a\n\n'])).to.deep.equal(['a']);
    expect(await eventsOf([bom, 'data: a'])).to.deep.equal(['a']);
    expect(await eventsOf([Buffer.concat([Buffer.from('data: a\n\ndata: '), bom, Buffer.from('b\n\n')])])).to.deep.equal(['a', '\ufeffb']);
  });

  it('yields an event whose one line came in a thousand chunks, and skips a line that grows past maxBytes before it ends', async () => {
    const value = 'é'.repeat(1000);
    const bytes = Buffer.from(`data: ${value}\n\n`);
    const chunks = Array.from({ length: Math.ceil(bytes.length / 2) }, (_, k) => bytes.subarray(2 * k, 2 * k + 2));
    expect(await eventsOf(chunks, 4096)).to.deep.equal([value]);
    const error = await eventsOf([...chunks, 'data: next\n\n'], 512).then(undefined, (e: unknown) => e);
    expect(error).to.be.instanceOf(RangeError);
  });

  it('throws RangeError for a line over maxBytes before it ends (a stream that would hold it forever)', async () => {
    let sent = 0;
    async function* endless(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('data: ');
      for (;;) {
        sent++;
        yield Buffer.from('x'.repeat(64));
      }
    }
    const error = await (async () => {
      for await (const data of sseEventData(endless(), 1024)) void data;
    })().then(undefined, (e: unknown) => e);
    expect(error).to.be.instanceOf(RangeError);
    expect(sent).to.be.within(16, 18);
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
