import { expect } from 'chai';
import fc from 'fast-check';
import { classify, encodeMessage, type RequestMessage } from '../../lib';
import { splitAt } from '../helpers/framing';
import { cuts, fuzzParameters, garbageBytes, isLongFuzzRun, message } from '../helpers/fuzz';
import { RawPeer } from '../helpers/raw-peer';

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
            const line = await peer.nextLine();
            if (line === '{"jsonrpc":"2.0","id":"probe","result":["ok"]}') break;
            const reply = classify(JSON.parse(line));
            expect(reply.kind, line).to.equal('response');
            expect(reply, line).to.have.nested.property('message.error.code').that.is.oneOf([-32700, -32600]);
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
          const requests = messages.filter((m): m is RequestMessage => classify(m).kind === 'request');
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
          peer.writeLine(`{"jsonrpc":"2.0","id":${id},"method":"m","params":[true]}`);
          expect(await peer.nextLine()).to.equal(`{"jsonrpc":"2.0","id":${id},"result":[true]}`);
        }),
      ),
      fuzzParameters(),
    );
  });
});
