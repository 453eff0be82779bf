/**
 * The JSON text helpers of the framing layer.
 */
import { expect } from 'chai';
import { decimalText } from '../lib/framing/json-text';

describe('decimalText', () => {
  it('writes every finite number as String() does (cursors, request ids, sequence numbers)', () => {
    // A seeded linear congruential generator: the same values on every run.
    let seed = 0x2545f491;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const values = [0, -0, 1, 9, 10, 99, 100, 2 ** 31 - 1, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER, -1, 0.5, 1e21, 1e-7, -123.456];
    for (let i = 0; i < 5_000; i++) values.push(next(), next() * 2 ** 21 + next(), -next(), next() / 1000);
    // Every width below a billion, zeros inside (1000007, 100010001) and the edges of each width.
    for (let i = 0; i < 2_000; i++)
      values.push(i, next() % 10 ** (1 + (i % 9)), 10 ** (i % 10) + (i % 3) - 1, 10 ** (3 + (i % 7)) + (i % 11));
    values.push(999_999_999, 1_000_000_000, 1_000_000_001, 100_010_001, 1_000_007, 999_999.5);
    for (const value of values) expect(decimalText(value), String(value)).to.equal(String(value));
  });
});
