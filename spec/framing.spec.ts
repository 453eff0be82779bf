import { expect } from 'chai';
import { Readable } from 'node:stream';
import {
  DEFAULT_MAX_LINE_BYTES,
  FrameTooLargeError,
  JsonParseError,
  LineDecoder,
  NULL_VALUE,
  NdjsonDecoder,
  NdjsonEncoder,
  SerializationError,
  encodeMessage,
} from '../lib';
import { nextEvent } from './helpers/events';
import { bytewise, decodeChunks, decodeErrorsOf, valuesOf } from './helpers/framing';

const REQUEST = { jsonrpc: '2.0', id: 1, method: 'echo', params: { text: 'hi' } };
const REQUEST_LINE = JSON.stringify(REQUEST);

/** Collects everything a readable stream emits until it ends. */
async function readAll(stream: Readable): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

describe('LineDecoder', () => {
  describe('constructor', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      it(`throws RangeError naming maxLineBytes for ${bad}`, () => {
        expect(() => new LineDecoder({ value() {}, error() {} }, { maxLineBytes: bad })).to.throw(RangeError, /maxLineBytes/);
      });
    }

    it('throws RangeError naming maxLineBytes for a numeric string', () => {
      const options = { maxLineBytes: '10' as unknown as number };
      expect(() => new LineDecoder({ value() {}, error() {} }, options)).to.throw(RangeError, /maxLineBytes/);
    });

    it('defaults the limit to 64 MiB', () => {
      expect(DEFAULT_MAX_LINE_BYTES).to.equal(64 * 1024 * 1024);
    });
  });

  describe('#write()', () => {
    it('delivers each line of one chunk, in order, with its text', () => {
      const events = decodeChunks(['{"a":1}\n[2]\n"three"\n']);
      expect(events).to.deep.equal([
        { kind: 'value', value: { a: 1 }, line: '{"a":1}' },
        { kind: 'value', value: [2], line: '[2]' },
        { kind: 'value', value: 'three', line: '"three"' },
      ]);
    });

    it('delivers a line split across two chunks', () => {
      expect(valuesOf(decodeChunks([REQUEST_LINE.slice(0, 10), `${REQUEST_LINE.slice(10)}\n`]))).to.deep.equal([REQUEST]);
    });

    it('delivers a line split into one-byte chunks', () => {
      expect(valuesOf(decodeChunks(bytewise(Buffer.from(`${REQUEST_LINE}\n`))))).to.deep.equal([REQUEST]);
    });

    it('delivers lines that share chunks with the ends of earlier lines', () => {
      const chunks = ['{"a":', '1}\n{"b"', ':2}\n{"c":3', '}\n'];
      expect(valuesOf(decodeChunks(chunks))).to.deep.equal([{ a: 1 }, { b: 2 }, { c: 3 }]);
    });

    it('accepts CRLF and passes the line text without its CR', () => {
      expect(decodeChunks(['{"a":1}\r\n', '{"b":2}\r', '\n'])).to.deep.equal([
        { kind: 'value', value: { a: 1 }, line: '{"a":1}' },
        { kind: 'value', value: { b: 2 }, line: '{"b":2}' },
      ]);
    });

    const characters = [
      ['2-byte', 'é'],
      ['3-byte', '€'],
      ['4-byte', '😀'],
    ] as const;
    for (const [size, char] of characters) {
      it(`keeps a ${size} UTF-8 character split at every byte inside it intact`, () => {
        const bytes = Buffer.from(`{"t":"a${char}b"}\n`);
        const at = bytes.indexOf(Buffer.from(char));
        for (let cut = at + 1; cut < at + Buffer.byteLength(char); cut++) {
          const events = decodeChunks([bytes.subarray(0, cut), bytes.subarray(cut)]);
          expect(events).to.deep.equal([{ kind: 'value', value: { t: `a${char}b` }, line: `{"t":"a${char}b"}` }]);
        }
      });
    }

    it('does not deliver a line before its newline or the end of input', () => {
      expect(decodeChunks(['{"a":1}'], {}, false)).to.deep.equal([]);
    });

    it('skips blank lines: empty, spaces, tabs and carriage returns', () => {
      const events = decodeChunks(['\n\n   \n\t\n\r\n \t\r \n{"a":1}\n\n']);
      expect(events).to.deep.equal([{ kind: 'value', value: { a: 1 }, line: '{"a":1}' }]);
    });

    it('does not depend on the caller keeping its chunk unchanged after write()', () => {
      const events: unknown[] = [];
      const decoder = new LineDecoder({ value: (v) => events.push(v), error: (e) => events.push(e) });
      const chunk = Buffer.from('{"a":"xyz');
      decoder.write(chunk);
      chunk.fill(0x41);
      decoder.write(Buffer.from('"}\n'));
      expect(events).to.deep.equal([{ a: 'xyz' }]);
    });

    it('delivers JSON null as null', () => {
      expect(valuesOf(decodeChunks(['null\n']))).to.deep.equal([null]);
    });
  });

  describe('#end()', () => {
    it('delivers a last line without a newline', () => {
      expect(valuesOf(decodeChunks(['{"a":1}\n{"b":', '2}']))).to.deep.equal([{ a: 1 }, { b: 2 }]);
    });

    it('delivers nothing more when the input ended with a newline', () => {
      expect(decodeChunks(['{"a":1}\n'])).to.have.length(1);
    });

    it('skips a last line that is blank', () => {
      expect(decodeChunks(['{"a":1}\n \t\r'])).to.have.length(1);
    });

    it('reports a last line that is not JSON as a JsonParseError', () => {
      const errors = decodeErrorsOf(decodeChunks(['{"a":1}\n{"b":']));
      expect(errors).to.have.length(1);
      expect(errors[0]).to.be.instanceOf(JsonParseError);
    });
  });

  describe('oversize lines', () => {
    const limit = { maxLineBytes: 16 };

    it('accepts a line of exactly maxLineBytes bytes', () => {
      const line = `"${'x'.repeat(14)}"`;
      expect(valuesOf(decodeChunks([`${line}\n`], limit))).to.deep.equal(['x'.repeat(14)]);
    });

    it('reports one FrameTooLargeError for a line one byte over and delivers the next line', () => {
      const events = decodeChunks([`"${'x'.repeat(15)}"\n{"a":1}\n`], limit);
      expect(events).to.have.length(2);
      expect(events[0]).to.have.property('kind', 'error');
      const error = decodeErrorsOf(events)[0];
      expect(error).to.be.instanceOf(FrameTooLargeError).and.include({ limit: 16, code: 'ACP_WIRE_FRAME_TOO_LARGE' });
      expect(events[1]).to.deep.equal({ kind: 'value', value: { a: 1 }, line: '{"a":1}' });
    });

    it('reports an oversize line split across many chunks once and delivers the next line', () => {
      const bytes = Buffer.from(`{"pad":"${'y'.repeat(100)}"}\n{"a":1}\n`);
      const events = decodeChunks(bytewise(bytes), limit);
      expect(decodeErrorsOf(events)).to.have.length(1);
      expect(valuesOf(events)).to.deep.equal([{ a: 1 }]);
    });

    it('discards an oversize line that began after a partial line in the same chunk', () => {
      const events = decodeChunks(['{"a":', `1}\n"${'z'.repeat(40)}`, `${'z'.repeat(40)}"\n[3]\n`], limit);
      expect(events.map((e) => e.kind)).to.deep.equal(['value', 'error', 'value']);
      expect(valuesOf(events)).to.deep.equal([{ a: 1 }, [3]]);
    });

    it('reports an oversize line without a newline at end of input once and delivers nothing else', () => {
      const events = decodeChunks(['{"a":1}\n', 'w'.repeat(20), 'w'.repeat(20)], limit);
      expect(events.map((e) => e.kind)).to.deep.equal(['value', 'error']);
    });

    it('does not deliver the tail of a discarded line as a line of its own', () => {
      const events = decodeChunks(['x'.repeat(17), '"tail"\n{"b":2}\n'], limit);
      expect(events.map((e) => e.kind)).to.deep.equal(['error', 'value']);
      expect(valuesOf(events)).to.deep.equal([{ b: 2 }]);
    });

    it("keeps the first bytes of an oversize line split across chunks as the error's head", () => {
      const line = `{"jsonrpc":"2.0","id":9,"method":"m","params":["${'p'.repeat(3000)}"]}`;
      const chunks = [...bytewise(Buffer.from(line.slice(0, 40))), `${line.slice(40)}\n`];
      const [error] = decodeErrorsOf(decodeChunks(chunks, { maxLineBytes: 2048 }));
      expect((error as FrameTooLargeError).head).to.equal(line.slice(0, 1024));
    });

    it('keeps the first 1,024 bytes of an oversize line that arrived in one chunk as its head', () => {
      const line = `["${'q'.repeat(3000)}"]`;
      const [error] = decodeErrorsOf(decodeChunks([`${line}\n`], limit));
      expect((error as FrameTooLargeError).head).to.equal(line.slice(0, 1024));
    });

    it('counts bytes, not characters', () => {
      // 6 three-byte characters plus quotes: 20 bytes, 8 characters.
      const events = decodeChunks([`"${'€'.repeat(6)}"\n`], limit);
      expect(decodeErrorsOf(events)[0]).to.be.instanceOf(FrameTooLargeError);
    });
  });

  describe('a UTF-8 byte order mark', () => {
    const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

    it('is skipped at the start of the stream: the first line decodes', () => {
      expect(decodeChunks([Buffer.concat([BOM, Buffer.from(`${REQUEST_LINE}\n[2]\n`)])])).to.deep.equal([
        { kind: 'value', value: REQUEST, line: REQUEST_LINE },
        { kind: 'value', value: [2], line: '[2]' },
      ]);
    });

    it('is skipped when it is split across chunks', () => {
      const events = decodeChunks([...bytewise(BOM), '[1]\n']);
      expect(events).to.deep.equal([{ kind: 'value', value: [1], line: '[1]' }]);
    });

    it('is skipped before a blank first line', () => {
      expect(valuesOf(decodeChunks([BOM, '\r\n[1]\n']))).to.deep.equal([[1]]);
    });

    it('is not skipped later in the stream: a line that starts with one is a JsonParseError', () => {
      const events = decodeChunks(['[1]\n', BOM, '[2]\n']);
      expect(events.map((e) => e.kind)).to.deep.equal(['value', 'error']);
    });
  });

  describe('#discard()', () => {
    it('drops a partial line instead of decoding it, and a later end() decodes nothing', () => {
      const events: unknown[] = [];
      const decoder = new LineDecoder({ value: (value) => events.push(value), error: (error) => events.push(error) });
      decoder.write(Buffer.from('[1]\n[2'));
      decoder.discard();
      decoder.end();
      expect(events).to.deep.equal([[1]]);
    });
  });

  describe('parse failures', () => {
    it('reports a JsonParseError whose cause is the SyntaxError and delivers the next line', () => {
      const events = decodeChunks(['{not json}\n{"a":1}\n']);
      expect(events).to.have.length(2);
      const error = decodeErrorsOf(events)[0];
      expect(error).to.be.instanceOf(JsonParseError).and.include({ code: 'ACP_WIRE_JSON_PARSE', line: '{not json}' });
      expect((error as JsonParseError).cause).to.be.instanceOf(SyntaxError);
      expect(events[1]).to.deep.equal({ kind: 'value', value: { a: 1 }, line: '{"a":1}' });
    });

    it('reports invalid UTF-8 that is not JSON as a JsonParseError', () => {
      const events = decodeChunks([Buffer.from([0xff, 0xfe, 0x0a]), '[1]\n']);
      expect(events.map((e) => e.kind)).to.deep.equal(['error', 'value']);
    });

    it('reports a NUL byte inside a JSON string as a JsonParseError', () => {
      const errors = decodeErrorsOf(decodeChunks([Buffer.from('"a\u0000b"\n')]));
      expect(errors).to.have.length(1);
      expect(errors[0]).to.be.instanceOf(JsonParseError);
    });
  });
});

describe('NdjsonDecoder', () => {
  it('emits one value per line across chunk boundaries', async () => {
    const source = Readable.from([Buffer.from('{"a":1}\n{"b"'), Buffer.from(':2}\n[3]')]);
    expect(await readAll(source.pipe(new NdjsonDecoder()))).to.deep.equal([{ a: 1 }, { b: 2 }, [3]]);
  });

  it('emits NULL_VALUE for a JSON null line', async () => {
    const source = Readable.from([Buffer.from('null\n1\n')]);
    expect(await readAll(source.pipe(new NdjsonDecoder()))).to.deep.equal([NULL_VALUE, 1]);
  });

  it('emits a bad line as its error object in its place and does not error the stream', async () => {
    const source = Readable.from([Buffer.from(`1\n{bad\n"${'x'.repeat(20)}"\n2\n`)]);
    const out = await readAll(source.pipe(new NdjsonDecoder({ maxLineBytes: 8 })));
    expect(out).to.have.length(4);
    expect(out[0]).to.equal(1);
    expect(out[1]).to.be.instanceOf(JsonParseError);
    expect(out[2]).to.be.instanceOf(FrameTooLargeError);
    expect(out[3]).to.equal(2);
  });

  it('throws RangeError for an invalid maxLineBytes', () => {
    expect(() => new NdjsonDecoder({ maxLineBytes: 0 })).to.throw(RangeError, /maxLineBytes/);
  });
});

describe('NdjsonEncoder', () => {
  it('writes exactly one line per message', async () => {
    const encoder = new NdjsonEncoder();
    const text = readAll(encoder).then((chunks) => Buffer.concat(chunks as Buffer[]).toString('utf8'));
    encoder.write({ a: 'line\nbreak' });
    encoder.write([1, 2]);
    encoder.end('end');
    expect(await text).to.equal('{"a":"line\\nbreak"}\n[1,2]\n"end"\n');
  });

  it('fails the write with a SerializationError for a BigInt', async () => {
    const encoder = new NdjsonEncoder();
    const failed = nextEvent<[Error]>(encoder, 'error');
    encoder.write({ n: 1n });
    const [error] = await failed;
    expect(error).to.be.instanceOf(SerializationError).and.include({ code: 'ACP_WIRE_SERIALIZATION' });
    expect(error.cause).to.be.instanceOf(TypeError);
  });

  it('fails the write with a SerializationError for a cycle', async () => {
    const encoder = new NdjsonEncoder();
    const failed = nextEvent<[Error]>(encoder, 'error');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    encoder.write(cyclic);
    const [error] = await failed;
    expect(error).to.be.instanceOf(SerializationError);
  });
});

describe('encodeMessage()', () => {
  it('serializes a message as its JSON text followed by one newline', () => {
    expect(encodeMessage(REQUEST)).to.equal(`${REQUEST_LINE}\n`);
  });

  it('escapes newlines and carriage returns inside strings so a message stays on one line', () => {
    const line = encodeMessage({ text: 'a\nb\rc' });
    expect(line.indexOf('\n')).to.equal(line.length - 1);
    expect(line).not.to.include('\r');
  });

  it('throws SerializationError with the TypeError as cause for a BigInt', () => {
    expect(() => encodeMessage({ n: 1n }))
      .to.throw(SerializationError)
      .with.property('cause')
      .that.is.instanceOf(TypeError);
  });

  it('throws SerializationError for a cycle', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => encodeMessage(cyclic)).to.throw(SerializationError);
  });

  it('throws SerializationError for a value that serializes to nothing', () => {
    expect(() => encodeMessage(undefined)).to.throw(SerializationError);
    expect(() => encodeMessage(() => 1)).to.throw(SerializationError);
  });
});
