import { expect } from 'chai';
import { SerializationError } from '../lib';
import { encodeResponseWithRawId, findRawId, rawIdText } from '../lib/framing/raw-id';
import { deeplyNestedArray } from './helpers/fuzz';

describe('raw-id', () => {
  describe('findRawId()', () => {
    const found: [string, string, string][] = [
      ['a number', '{"jsonrpc":"2.0","id":9007199254740993,"method":"m"}', '9007199254740993'],
      ['a string', '{"id":"a\\"b","method":"m"}', '"a\\"b"'],
      ['null', '{"id":null}', 'null'],
      ['an exponent', '{"method":"m","id":1E+400}', '1E+400'],
      ['a negative fraction', '{"id":-0.50}', '-0.50'],
      ['the last of duplicate members', '{"id":1,"method":"m","id":22}', '22'],
      ['a key written with escapes', '{"\\u0069d":77}', '77'],
      ['whitespace around members', ' { "a" : 1 ,\t"id"\r: 12345678901234567890 } ', '12345678901234567890'],
    ];
    for (const [name, text, raw] of found) {
      it(`finds ${name}`, () => {
        expect(findRawId(text)).to.equal(raw);
      });
    }

    it('skips "id" inside nested objects, arrays and strings', () => {
      const text = '{"params":{"id":1,"x":[{"id":2}]},"s":"\\"id\\":3","id":4}';
      expect(findRawId(text)).to.equal('4');
    });

    it('skips brackets inside strings of nested values', () => {
      expect(findRawId('{"params":["]}",{"k":"{["}],"id":5}')).to.equal('5');
    });

    it('returns undefined when the object has no id member', () => {
      expect(findRawId('{"jsonrpc":"2.0","method":"m","params":{"id":1}}')).to.equal(undefined);
    });

    for (const text of ['', '[1]', '42', '{}', '{"id":', '{"id":1', '{"id" 1}', '{"a":"unterminated', '{id:1}', '{"id":1 "b":2}']) {
      it(`returns undefined for ${JSON.stringify(text)}`, () => {
        expect(findRawId(text)).to.equal(undefined);
      });
    }

    it('skips a value nested 100,000 levels deep without recursion', () => {
      expect(findRawId(`{"params":${deeplyNestedArray(100_000)},"id":6}`)).to.equal('6');
    });
  });

  describe('rawIdText()', () => {
    /** The line a peer sends with `token` as its id, and the id JSON.parse reads from it. */
    function request(token: string, rest = '"method":"m"'): [string, number] {
      const line = `{"jsonrpc":"2.0","id":${token},${rest}}`;
      return [line, (JSON.parse(line) as { id: number }).id];
    }

    for (const token of ['9007199254740993', '1.50', '1e21', '1e-400', '1.0000000000000000001', '1.0', '-0', '2E0']) {
      it(`returns ${token}, which JSON.stringify would write differently`, () => {
        expect(rawIdText(...request(token))).to.equal(token);
      });
    }

    for (const token of ['0', '7', '-12', '9007199254740991', '1.5']) {
      it(`returns undefined for ${token}, written back exactly`, () => {
        expect(rawIdText(...request(token))).to.equal(undefined);
      });
    }

    it('reads the top-level id, not one in params, a string or an earlier duplicate member', () => {
      const line = '{"jsonrpc":"2.0","id":5,"params":{"id":1e-400,"s":"\\"id\\":0"},"method":"m","id":1e-400}';
      expect(rawIdText(line, 0)).to.equal('1e-400');
    });

    describe('in a line of more than 64 KiB dense with quotes (searched with a regular expression)', () => {
      const records = JSON.stringify(Array.from({ length: 4000 }, (_, i) => ({ path: `f${i}`, kind: 'file', tags: ['a', 'b'] })));

      it('reads a later duplicate member with the same value written differently', () => {
        expect(rawIdText(`{"jsonrpc":"2.0","id":7,"method":"m","params":${records},"id":7.0}`, 7)).to.equal('7.0');
      });

      it('reads a duplicate member written with spaces before its colon', () => {
        expect(rawIdText(`{"jsonrpc":"2.0","id":7,"params":${records},"id" \t :70e-1}`, 7)).to.equal('70e-1');
      });

      it('reads the top-level id, not one nested in params', () => {
        const nested = records.replace('"path"', '"id":1.0,"path"');
        expect(rawIdText(`{"jsonrpc":"2.0","method":"m","params":${nested},"id":1}`, 1)).to.equal(undefined);
        expect(rawIdText(`{"jsonrpc":"2.0","id":1.0,"method":"m","params":${nested}}`, 1)).to.equal('1.0');
      });

      it('returns undefined for a plain integer id that occurs once', () => {
        expect(rawIdText(`{"jsonrpc":"2.0","id":7,"method":"m","params":${records}}`, 7)).to.equal(undefined);
      });
    });

    it('reads the id of a short line whose params hold a member ending in id', () => {
      expect(rawIdText('{"jsonrpc":"2.0","id":1.0,"method":"m","params":{"pid":3,"uuid":"x"}}', 1)).to.equal('1.0');
      expect(rawIdText('{"jsonrpc":"2.0","id":1,"method":"m","params":{"pid":3}}', 1)).to.equal(undefined);
    });

    it('reads an id whose key is written with escapes', () => {
      expect(rawIdText('{"jsonrpc":"2.0","\\u0069d":1.0,"method":"m"}', 1)).to.equal('1.0');
    });

    it('returns undefined when the token does not read back as the id', () => {
      expect(rawIdText('{"id":9007199254740993}', 5)).to.equal(undefined);
    });

    it('returns undefined when the member is not a number token', () => {
      expect(rawIdText('{"id":"1.50"}', 1.5)).to.equal(undefined);
    });
  });

  describe('encodeResponseWithRawId()', () => {
    it('writes a result response with the id token verbatim', () => {
      expect(encodeResponseWithRawId('9007199254740993', { result: { a: [1] } })).to.equal(
        '{"jsonrpc":"2.0","id":9007199254740993,"result":{"a":[1]}}',
      );
    });

    it('writes an error response with the id token verbatim', () => {
      expect(encodeResponseWithRawId('1.50', { error: { code: -32601, message: 'Method not found', data: 'm' } })).to.equal(
        '{"jsonrpc":"2.0","id":1.50,"error":{"code":-32601,"message":"Method not found","data":"m"}}',
      );
    });

    it('throws SerializationError when the result cannot be serialized', () => {
      const result = { n: 1n } as unknown as null;
      expect(() => encodeResponseWithRawId('1.5', { result })).to.throw(SerializationError);
    });
  });
});
