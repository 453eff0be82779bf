/**
 * An outgoing request's state belongs to the request: its id, params and state are read, and only
 * its own methods (events of the state machine) change them. The `@ts-expect-error` lines are
 * claims that `npm run typecheck` checks: each would compile if the field were writable.
 */
import { expect } from 'chai';
import { OutboundRequest, type OutboundWire } from '../lib/requests/outbound-request';

/** A wire that publishes with id 1 and sends nothing. */
function quietWire(): OutboundWire {
  return { publish: (request) => request.markPublished(1), sendCancel: () => {}, giveUp: () => {} };
}

describe('OutboundRequest', () => {
  describe('its state, from outside', () => {
    it('rejects an assignment to id, at compile time and at run time: markPublished() sets it', () => {
      const request = new OutboundRequest('m', undefined, quietWire());
      request.wire.publish(request);
      expect(() => {
        // @ts-expect-error id is read-only.
        request.id = 2;
      }).to.throw(TypeError);
      expect(request.id).to.equal(1);
    });

    it('rejects an assignment to state, at compile time and at run time: events move it', () => {
      const request = new OutboundRequest('m', undefined, quietWire());
      expect(() => {
        // @ts-expect-error state is read-only.
        request.state = 'settled';
      }).to.throw(TypeError);
      expect(request.state).to.equal('prepared');
    });

    it('rejects an assignment to params, at compile time and at run time', () => {
      const request = new OutboundRequest('m', { a: 1 }, quietWire());
      expect(() => {
        // @ts-expect-error params is read-only (released once published).
        request.params = { a: 2 };
      }).to.throw(TypeError);
      expect(request.params).to.deep.equal({ a: 1 });
    });
  });
});
