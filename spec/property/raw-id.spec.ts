import { expect } from 'chai';
import fc from 'fast-check';
import type { JsonValue } from '../../lib';
import { findRawId, rawIdText } from '../../lib/framing/raw-id';
import { fuzzParameters, isLongFuzzRun, jsonValue } from '../helpers/fuzz';

const key = fc.oneof(fc.constant('id'), fc.string({ unit: 'binary', maxLength: 8 }));

/** A JSON object whose members may include `id`, nested objects with `id`, and tricky strings. */
const object = fc.dictionary(
  key,
  fc.oneof(jsonValue, fc.dictionary(key, jsonValue, { maxKeys: 3 }), fc.constantFrom('"id":1', '{', ']', '\\')),
  { maxKeys: 6 },
) as fc.Arbitrary<Record<string, JsonValue>>;

/** A number token JSON allows: sign, integer part, optional fraction and exponent. */
const numberToken = fc
  .tuple(
    fc.boolean(),
    fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: 10n ** 40n }).map(String)),
    fc.option(fc.stringMatching(/^[0-9]{1,20}$/), { nil: undefined }),
    fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 30 })), { nil: undefined }),
  )
  .map(
    ([negative, int, frac, exp]) =>
      `${negative ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}${exp === undefined ? '' : exp.join('')}`,
  );

describe('raw id properties', function () {
  if (isLongFuzzRun) this.timeout(0);

  describe('findRawId()', () => {
    it('finds the text of the id member JSON.parse reads, in any formatting, or nothing when there is none', () => {
      fc.assert(
        fc.property(object, fc.constantFrom(undefined, 0, 2, '\t'), (value, indent) => {
          const text = JSON.stringify(value, null, indent);
          const raw = findRawId(text);
          if (Object.hasOwn(value, 'id')) expect(JSON.parse(raw!)).to.deep.equal(value.id);
          else expect(raw).to.equal(undefined);
        }),
        fuzzParameters(),
      );
    });

    it('returns any number token of the id verbatim, wherever the member is', () => {
      fc.assert(
        fc.property(numberToken, object, fc.nat(), (token, rest, at) => {
          const members = Object.entries(rest)
            .filter(([k]) => k !== 'id')
            .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
          members.splice(at % (members.length + 1), 0, `"id":${token}`);
          const text = `{${members.join(',')}}`;
          const parsed = JSON.parse(text) as { id: number };
          expect(findRawId(text)).to.equal(token);
          if (Number.isFinite(parsed.id)) expect(rawIdText(text, parsed.id) ?? String(parsed.id)).to.equal(token);
        }),
        fuzzParameters(),
      );
    });

    it('never throws on arbitrary text', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
          const raw = findRawId(text);
          expect(raw === undefined || typeof raw === 'string').to.equal(true);
        }),
        fuzzParameters(),
      );
    });
  });
});
