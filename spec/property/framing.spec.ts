import { expect } from 'chai';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { FrameTooLargeError, JsonParseError, classify, encodeMessage } from '../../lib';
import { decodeChunks, decodeErrorsOf, splitAt, valuesOf } from '../helpers/framing';
import { cuts, fuzzParameters, garbageBytes, isLongFuzzRun, message } from '../helpers/fuzz';

/** The NDJSON bytes of `messages`, with optional CRLF endings and blank lines between them. */
function ndjson(messages: readonly unknown[], crlf = false, blank = ''): Buffer {
  const lines = messages.map((m) => encodeMessage(m).replace(/\n$/, crlf ? '\r\n' : '\n'));
  return Buffer.from(lines.join(blank));
}

describe('framing properties', function () {
  if (isLongFuzzRun) this.timeout(0);

  describe('LineDecoder', () => {
    it('decodes any chunking of any sequence of messages to the same messages', () => {
      fc.assert(
        fc.property(
          fc.array(message, { maxLength: 8 }),
          cuts,
          fc.boolean(),
          fc.constantFrom('', '\n', ' \t\r\n', '\r\n\n'),
          (messages, at, crlf, blank) => {
            const events = decodeChunks(splitAt(ndjson(messages, crlf, blank), at));
            expect(decodeErrorsOf(events)).to.deep.equal([]);
            expect(valuesOf(events)).to.deep.equal(messages);
          },
        ),
        fuzzParameters(),
      );
    });

    it('delivers the same messages whether or not the last line ends with a newline', () => {
      fc.assert(
        fc.property(fc.array(message, { minLength: 1, maxLength: 5 }), cuts, (messages, at) => {
          const bytes = ndjson(messages);
          const events = decodeChunks(splitAt(bytes.subarray(0, bytes.length - 1), at));
          expect(valuesOf(events)).to.deep.equal(messages);
        }),
        fuzzParameters(),
      );
    });

    it('never throws on arbitrary bytes and still delivers every valid line after a newline', () => {
      fc.assert(
        fc.property(
          garbageBytes,
          fc.array(message, { minLength: 1, maxLength: 4 }),
          cuts,
          fc.integer({ min: 0, max: 300 }),
          fc.boolean(),
          (garbage, messages, at, slack, end) => {
            const valid = ndjson(messages);
            const longest = Math.max(
              ...valid
                .toString('utf8')
                .split('\n')
                .map((l) => Buffer.byteLength(l)),
            );
            const bytes = Buffer.concat([garbage, Buffer.from('\n'), valid]);
            const events = decodeChunks(splitAt(bytes, at), { maxLineBytes: longest + slack }, end);
            const values = valuesOf(events);
            expect(values.slice(values.length - messages.length)).to.deep.equal(messages);
            for (const error of decodeErrorsOf(events)) {
              expect(error).to.satisfy((e: unknown) => e instanceof JsonParseError || e instanceof FrameTooLargeError);
            }
          },
        ),
        fuzzParameters(),
      );
    });

    it('reports every line over the limit exactly once', () => {
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 10 }),
          fc.integer({ min: 2, max: 32 }),
          cuts,
          (lengths, limit, at) => {
            // Each line is a JSON string of `length` bytes: valid when it fits, discarded otherwise.
            const lines = lengths.map((n) => (n < 2 ? '1' : `"${'x'.repeat(n - 2)}"`));
            const events = decodeChunks(splitAt(Buffer.from(`${lines.join('\n')}\n`), at), { maxLineBytes: limit });
            const expected = lines.map((l) => (l.length > limit ? 'error' : 'value'));
            expect(events.map((e) => e.kind)).to.deep.equal(expected);
          },
        ),
        fuzzParameters(),
      );
    });
  });

  describe('encodeMessage() then LineDecoder', () => {
    it('is the identity on JSON-RPC messages, and each line classifies as what it was', () => {
      fc.assert(
        fc.property(message, (m) => {
          const line = encodeMessage(m);
          expect(line.indexOf('\n')).to.equal(line.length - 1);
          const [decoded] = valuesOf(decodeChunks([line]));
          expect(decoded).to.deep.equal(m);
          const kind = classify(decoded).kind;
          const expected = 'method' in m ? ('id' in m ? 'request' : 'notification') : 'response';
          expect(kind).to.equal(expected);
        }),
        fuzzParameters(),
      );
    });
  });

  describe('a 1 MiB line without a newline', () => {
    const garbage = (): Buffer => {
      const bytes = randomBytes(1024 * 1024);
      for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) bytes[i] = 0x20;
      return bytes;
    };
    const chunked = (bytes: Buffer, size: number): Buffer[] => {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      return chunks;
    };

    it('is reported once as a JsonParseError under the default limit; the next line is delivered', () => {
      const events = decodeChunks([...chunked(garbage(), 65536), '\n{"a":1}\n']);
      expect(events.map((e) => e.kind)).to.deep.equal(['error', 'value']);
      expect(decodeErrorsOf(events)[0]).to.be.instanceOf(JsonParseError);
    });

    it('is reported once as a FrameTooLargeError over a small limit; the next line is delivered', () => {
      const events = decodeChunks([...chunked(garbage(), 4096), '\n{"a":1}\n'], { maxLineBytes: 1000 });
      expect(events.map((e) => e.kind)).to.deep.equal(['error', 'value']);
      expect(decodeErrorsOf(events)[0]).to.be.instanceOf(FrameTooLargeError);
    });

    it('is reported once at end of input', () => {
      const events = decodeChunks(chunked(garbage(), 65536));
      expect(events.map((e) => e.kind)).to.deep.equal(['error']);
    });
  });
});
