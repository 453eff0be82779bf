/** configureIdleCollection(): option validation at the entry point (the collector itself is covered by the unanswered-request specs). */
import { expect } from 'chai';
import { configureIdleCollection } from '../lib';

/** The documented defaults, restored after each test: the collector is shared by every connection. */
const DEFAULTS = { enabled: true, initialDelayMs: 1000, maxDelayMs: 8000 };

describe('configureIdleCollection()', () => {
  afterEach(() => configureIdleCollection(DEFAULTS));

  for (const option of ['initialDelayMs', 'maxDelayMs'] as const) {
    for (const value of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '100' as unknown as number]) {
      it(`throws RangeError naming ${option} for ${typeof value === 'string' ? `the string '${value}'` : String(value)}`, () => {
        expect(() => configureIdleCollection({ [option]: value })).to.throw(RangeError, option);
      });
    }
  }

  it('throws RangeError when initialDelayMs exceeds maxDelayMs', () => {
    expect(() => configureIdleCollection({ initialDelayMs: 500, maxDelayMs: 100 })).to.throw(RangeError, /initialDelayMs must not exceed maxDelayMs/);
  });

  it('checks a delay given alone against the other one as configured', () => {
    configureIdleCollection({ maxDelayMs: 1000 });
    expect(() => configureIdleCollection({ initialDelayMs: 2000 })).to.throw(RangeError, /initialDelayMs must not exceed maxDelayMs/);
    expect(() => configureIdleCollection({ maxDelayMs: 999, initialDelayMs: 999 })).not.to.throw();
  });

  it('accepts equal delays and fractions of a millisecond', () => {
    expect(() => configureIdleCollection({ initialDelayMs: 300, maxDelayMs: 300 })).not.to.throw();
    expect(() => configureIdleCollection({ initialDelayMs: 0.5 })).not.to.throw();
  });

  it('changes nothing when it throws', () => {
    configureIdleCollection({ initialDelayMs: 100, maxDelayMs: 1000 });
    expect(() => configureIdleCollection({ initialDelayMs: 5000, maxDelayMs: Number.NaN })).to.throw(RangeError, 'maxDelayMs');
    // Had initialDelayMs become 5000, a maximum of 1000 would now be refused.
    expect(() => configureIdleCollection({ maxDelayMs: 1000 })).not.to.throw();
  });
});
