/**
 * Reading an event stream (`sseEventData`, on the one `SseParser` of the HTTP client, the MCP
 * server library adapter and the bridge's stdio relay): each event's data as it ends.
 */
import { expect } from 'chai';
import { sseEventData } from '../../lib/transports/remote/sse';

async function eventsOf(chunks: readonly string[], maxBytes = 1024): Promise<string[]> {
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const chunk of chunks) yield Buffer.from(chunk);
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
});
