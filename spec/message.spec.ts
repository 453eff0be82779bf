import { expect } from 'chai';
import { JSONRPC_VERSION, classify, isRequestId, type Classification } from '../lib';
import { isErrorObject, isParams } from '../lib/jsonrpc/message';

/** Classifies the value that `text` parses to, as the connection does with each line. */
function classifyText(text: string): Classification {
  return classify(JSON.parse(text));
}

describe('message', () => {
  describe('JSONRPC_VERSION', () => {
    it('is "2.0"', () => {
      expect(JSONRPC_VERSION).to.equal('2.0');
    });
  });

  describe('classify()', () => {
    describe('requests', () => {
      for (const id of ['1', '"abc"', 'null', '-7', '1.5', '""']) {
        it(`classifies a message with method and id ${id} as a request`, () => {
          const text = `{"jsonrpc":"2.0","id":${id},"method":"m","params":{"a":1}}`;
          expect(classifyText(text)).to.deep.equal({ kind: 'request', message: JSON.parse(text) });
        });
      }

      it('classifies a request with by-position params', () => {
        expect(classifyText('{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}')).to.have.property('kind', 'request');
      });

      it('classifies a request without params', () => {
        expect(classifyText('{"jsonrpc":"2.0","id":1,"method":"m"}')).to.have.property('kind', 'request');
      });

      it('classifies a request whose method is an Object.prototype name', () => {
        const c = classifyText('{"jsonrpc":"2.0","id":1,"method":"__proto__"}');
        expect(c).to.deep.equal({ kind: 'request', message: { jsonrpc: '2.0', id: 1, method: '__proto__' } });
      });
    });

    describe('notifications', () => {
      it('classifies a message with method and no id as a notification', () => {
        const text = '{"jsonrpc":"2.0","method":"n","params":{"x":[1]}}';
        expect(classifyText(text)).to.deep.equal({ kind: 'notification', message: JSON.parse(text) });
      });

      it('classifies a notification without params', () => {
        expect(classifyText('{"jsonrpc":"2.0","method":"n"}')).to.have.property('kind', 'notification');
      });
    });

    describe('responses', () => {
      for (const text of [
        '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}',
        '{"jsonrpc":"2.0","id":"a","result":null}',
        '{"jsonrpc":"2.0","id":null,"result":0}',
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found","data":"m"}}',
        '{"jsonrpc":"2.0","id":3,"error":{"code":-32800,"message":"Request cancelled"}}',
      ]) {
        it(`classifies ${text} as a response`, () => {
          expect(classifyText(text)).to.deep.equal({ kind: 'response', message: JSON.parse(text) });
        });
      }
    });

    describe('invalid messages (answered -32600)', () => {
      const cases: [string, string, null | number | string][] = [
        ['a number', '42', null],
        ['a string', '"text"', null],
        ['null', 'null', null],
        ['a boolean', 'true', null],
        ['a batch', '[{"jsonrpc":"2.0","id":1,"method":"m"}]', null],
        ['an empty batch', '[]', null],
        ['a wrong jsonrpc', '{"jsonrpc":"1.0","id":1,"method":"m"}', 1],
        ['a missing jsonrpc', '{"id":"x","method":"m"}', 'x'],
        ['a numeric jsonrpc', '{"jsonrpc":2.0,"id":1,"method":"m"}', 1],
        ['a numeric method', '{"jsonrpc":"2.0","id":1,"method":42}', 1],
        ['a null method', '{"jsonrpc":"2.0","id":1,"method":null}', 1],
        ['an object id', '{"jsonrpc":"2.0","id":{"a":1},"method":"m"}', null],
        ['an array id', '{"jsonrpc":"2.0","id":[1],"method":"m"}', null],
        ['a boolean id', '{"jsonrpc":"2.0","id":true,"method":"m"}', null],
        ['an invalid id and a numeric method', '{"jsonrpc":"2.0","id":false,"method":1}', null],
        ['string params', '{"jsonrpc":"2.0","id":1,"method":"m","params":"p"}', 1],
        ['numeric params', '{"jsonrpc":"2.0","id":1,"method":"m","params":3}', 1],
        ['null params', '{"jsonrpc":"2.0","id":1,"method":"m","params":null}', 1],
        ['boolean params of a notification', '{"jsonrpc":"2.0","method":"n","params":false}', null],
      ];
      for (const [name, text, id] of cases) {
        it(`classifies ${name} as invalid with id ${JSON.stringify(id)} and a reason`, () => {
          const c = classifyText(text);
          expect(c).to.include({ kind: 'invalid', id });
          expect(c).to.have.property('reason').that.is.a('string').and.not.empty;
        });
      }
    });

    describe('malformed responses (dropped)', () => {
      const cases: [string, string][] = [
        ['no id', '{"jsonrpc":"2.0","result":1}'],
        ['an invalid id', '{"jsonrpc":"2.0","id":{},"result":1}'],
        ['both result and error', '{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}'],
        ['neither result nor error', '{"jsonrpc":"2.0","id":1}'],
        ['an error that is not an object', '{"jsonrpc":"2.0","id":1,"error":"boom"}'],
        ['an error that is an array', '{"jsonrpc":"2.0","id":1,"error":[-1,"x"]}'],
        ['an error code that is not an integer', '{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}'],
        ['an error without message', '{"jsonrpc":"2.0","id":1,"error":{"code":1}}'],
      ];
      for (const [name, text] of cases) {
        it(`classifies a response with ${name} as badResponse`, () => {
          const c = classifyText(text);
          expect(c).to.have.property('kind', 'badResponse');
          expect(c).to.have.property('reason').that.is.a('string').and.not.empty;
        });
      }

      it('classifies a response with a wrong jsonrpc as invalid, not as a response', () => {
        expect(classifyText('{"jsonrpc":"1.0","id":1,"result":1}')).to.include({ kind: 'invalid', id: 1 });
      });
    });

    it('does not take method or id from the prototype', () => {
      const inherited = Object.assign(Object.create({ method: 'm', id: 1 }) as object, { jsonrpc: '2.0' });
      expect(classify(inherited)).to.deep.equal({ kind: 'badResponse', reason: 'a response needs a valid "id"' });
    });
  });

  describe('isRequestId()', () => {
    for (const id of ['', 'x', 0, -1, 1.5, 2 ** 60, null]) {
      it(`accepts ${JSON.stringify(id)}`, () => {
        expect(isRequestId(id)).to.equal(true);
      });
    }
    for (const id of [undefined, true, {}, [], Number.NaN, Number.POSITIVE_INFINITY, 1n]) {
      it(`rejects ${String(id)}`, () => {
        expect(isRequestId(id)).to.equal(false);
      });
    }
  });

  describe('isParams()', () => {
    it('accepts objects and arrays', () => {
      expect([isParams({}), isParams([]), isParams({ a: 1 })]).to.deep.equal([true, true, true]);
    });

    it('rejects null, strings, numbers and booleans', () => {
      expect([isParams(null), isParams('x'), isParams(1), isParams(false)]).to.deep.equal([false, false, false, false]);
    });
  });

  describe('isErrorObject()', () => {
    it('accepts an integer code and a string message, with or without data', () => {
      expect(isErrorObject({ code: -1, message: '' })).to.equal(true);
      expect(isErrorObject({ code: 7, message: 'x', data: [1] })).to.equal(true);
    });

    it('rejects arrays, null, a fractional code and a missing message', () => {
      const bad = [[1, 'x'], null, { code: 1.5, message: 'x' }, { code: 1 }, { code: '1', message: 'x' }];
      expect(bad.map(isErrorObject)).to.deep.equal([false, false, false, false, false]);
    });
  });
});
