/**
 * configureIdleCollection(): option validation at the entry point (the collector's automatic
 * answers are covered by the unanswered-request specs); and, for the idle collector on a big heap,
 * the duty cycle: forced collections take at most a fixed share of wall-clock time, so one request
 * a peer keeps open cannot make a process with a big heap stall every few seconds. Asserted on the
 * collector's schedule, never on elapsed time.
 */
import { expect } from 'chai';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { configureIdleCollection, createConnectionPair, type Connection, type Responder } from '../lib';
import { dutyCycleWait, idleCollectorStats } from '../lib/gc/idle-collector';

/** The documented defaults, restored after each test: the collector is shared by every connection. */
const DEFAULTS = { enabled: true, initialDelayMs: 1000, maxDelayMs: 8000, maxDutyCycle: 0.01 };

/** Resolves after the next forced full collection in this process. */
function nextForcedCollection(): Promise<void> {
  return new Promise((resolve) => {
    const observer = new PerformanceObserver((list) => {
      const forced = list.getEntries().some((entry) => {
        const flags = ((entry as { detail?: unknown }).detail as { flags?: number } | undefined)?.flags ?? 0;
        return (flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0;
      });
      if (!forced) return;
      observer.disconnect();
      resolve();
    });
    observer.observe({ entryTypes: ['gc'] });
  });
}

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
    expect(() => configureIdleCollection({ initialDelayMs: 500, maxDelayMs: 100 })).to.throw(
      RangeError,
      /initialDelayMs must not exceed maxDelayMs/,
    );
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

  for (const value of [0, -0.5, 1.5, Number.NaN, '0.1' as unknown as number]) {
    it(`throws RangeError naming maxDutyCycle for ${String(value)}`, () => {
      expect(() => configureIdleCollection({ maxDutyCycle: value })).to.throw(RangeError, 'maxDutyCycle');
    });
  }
});

describe('the idle collector', () => {
  afterEach(() => configureIdleCollection(DEFAULTS));

  describe('dutyCycleWait()', () => {
    it('makes a 300 ms collection wait 29.7 s for the next one at the default 1%', () => {
      expect(dutyCycleWait(300, 0.01)).to.be.closeTo(29_700, 1e-6);
    });

    it('leaves the 1 s → 8 s schedule alone for collections of a small heap (under 10 ms)', () => {
      expect(dutyCycleWait(10, 0.01)).to.be.below(1000);
    });
  });

  describe('while a peer keeps a request open', () => {
    let client: Connection;
    let agent: Connection;
    const held: Responder[] = [];
    let onHeld: (() => void) | undefined;
    /** Resolves once the agent's handler has returned, keeping its responder. */
    const hold = (): Promise<Responder> =>
      new Promise((resolve) => {
        onHeld = () => queueMicrotask(() => resolve(held.at(-1)!));
        void client.sendRequest('hold').then(undefined, () => undefined);
      });
    beforeEach(() => {
      [client, agent] = createConnectionPair();
      agent.onRequest('hold', (_params, responder) => {
        held.push(responder);
        onHeld?.();
      });
    });
    afterEach(async () => {
      for (const responder of held.splice(0)) if (!responder.hasResponded) responder.respond('done');
      await Promise.all([client.close(), agent.close()]);
    });

    it('waits after each forced collection in proportion to its cost, even for a request opened later', async () => {
      // At a duty cycle of 1/10,000, a collection of even 1 ms pushes the next one 10 s away,
      // far beyond maxDelayMs: the schedule can only be that long because of the duty cycle.
      configureIdleCollection({ initialDelayMs: 1, maxDelayMs: 2, maxDutyCycle: 1e-4 });
      const before = idleCollectorStats().collections;
      const collected = nextForcedCollection();
      const first = await hold();
      await collected;
      const stats = idleCollectorStats();
      expect(stats.collections).to.equal(before + 1);
      expect(stats.scheduledDelayMs).to.be.at.least(1000);
      first.respond('done');
      expect(idleCollectorStats().scheduledDelayMs).to.equal(undefined);
      // A new request does not restart the schedule at initialDelayMs right after a collection.
      await hold();
      expect(idleCollectorStats().scheduledDelayMs).to.be.at.least(1000);
    });
  });
});
