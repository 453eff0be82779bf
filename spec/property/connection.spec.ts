import { expect } from 'chai';
import fc from 'fast-check';
import { encodeMessage, type RequestMessage } from '../../lib';
import { splitAt } from '../helpers/framing';
import { cuts, fuzzParameters, garbageBytes, isLongFuzzRun, message } from '../helpers/fuzz';
import { RawPeer } from '../helpers/peers';

/**
 * The oracle: what docs/wire.md says a parsed line is, written here from its rules and not with the
 * library's own `classify()`. Not an object: invalid. With `method`: a request (with `id`) or a
 * notification, invalid when `jsonrpc` is not "2.0", `method` is not a string, `id` is present but
 * not a string, number or null, or `params` is present but neither an object nor an array.
 * Without `method`: a response.
 */
function kindOnTheWire(value: unknown): 'invalid' | 'request' | 'notification' | 'response' {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'invalid';
  const m = value as Record<string, unknown>;
  if (!('method' in m)) return 'response';
  const isId = (id: unknown): boolean => id === null || typeof id === 'string' || typeof id === 'number';
  const isParams = (params: unknown): boolean => typeof params === 'object' && params !== null;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string') return 'invalid';
  if (('id' in m && !isId(m.id)) || ('params' in m && !isParams(m.params))) return 'invalid';
  return 'id' in m ? 'request' : 'notification';
}

/** Runs `body` with a fresh raw peer whose connection echoes every request's params. */
async function withEchoPeer(body: (peer: RawPeer) => Promise<void>): Promise<void> {
  const peer = new RawPeer();
  peer.connection.onAnyRequest((params) => params ?? null);
  try {
    await body(peer);
  } finally {
    await peer.close();
  }
}

describe('connection properties', function () {
  if (isLongFuzzRun) this.timeout(0);

  it('answers a request that follows arbitrary bytes and a newline, and writes only error responses for the bytes', async () => {
    await fc.assert(
      fc.asyncProperty(garbageBytes, cuts, (garbage, at) =>
        withEchoPeer(async (peer) => {
          const probe = Buffer.from('\n{"jsonrpc":"2.0","id":"probe","method":"p","params":["ok"]}\n');
          for (const chunk of splitAt(Buffer.concat([garbage, probe]), at)) peer.writeRaw(chunk);
          for (;;) {
            const line = await peer.out.take();
            if (line === '{"jsonrpc":"2.0","id":"probe","result":["ok"]}') break;
            const reply: unknown = JSON.parse(line);
            expect(kindOnTheWire(reply), line).to.equal('response');
            expect(reply, line).to.have.nested.property('error.code').that.is.oneOf([-32700, -32600]);
          }
          expect(peer.connection.isClosed).to.equal(false);
        }),
      ),
      fuzzParameters(),
    );
  });

  it('answers each request of any chunked sequence of messages exactly once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(message, { maxLength: 8 }), cuts, (messages, at) =>
        withEchoPeer(async (peer) => {
          const bytes = Buffer.from(messages.map((m) => encodeMessage(m)).join(''));
          for (const chunk of splitAt(bytes, at)) peer.writeRaw(chunk);
          const requests = messages.filter((m): m is RequestMessage => kindOnTheWire(m) === 'request');
          const lines = await peer.linesBeforeProbe();
          const expected = requests.map((r) => encodeMessage({ jsonrpc: '2.0', id: r.id, result: r.params ?? null }).slice(0, -1));
          expect(lines).to.deep.equal(expected);
        }),
      ),
      fuzzParameters(),
    );
  });

  it('echoes any integer id byte for byte, however large', async () => {
    const token = fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String);
    await fc.assert(
      fc.asyncProperty(token, (id) =>
        withEchoPeer(async (peer) => {
          peer.send(`{"jsonrpc":"2.0","id":${id},"method":"m","params":[true]}`);
          expect(await peer.out.take()).to.equal(`{"jsonrpc":"2.0","id":${id},"result":[true]}`);
        }),
      ),
      fuzzParameters(),
    );
  });
});
