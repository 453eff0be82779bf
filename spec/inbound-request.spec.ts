/**
 * A received request's state belongs to the request: other modules read it and send it events
 * (methods), and nothing outside assigns it. The `@ts-expect-error` lines are claims that
 * `npm run typecheck` checks: each would compile if the field were writable.
 */
import { expect } from 'chai';
import { RpcError, type ErrorObject, type JsonValue } from '../lib';
import { InboundRequest, type AnswerObserver, type InboundWire } from '../lib/requests/inbound-request';

/** A wire that records what the request sends. */
function recordingWire(): InboundWire & { answers: (JsonValue | ErrorObject | undefined)[] } {
  const answers: (JsonValue | ErrorObject | undefined)[] = [];
  return {
    answers,
    isClosing: () => false,
    finish: (_request, result, error) => void answers.push(error ?? result),
  };
}

/** A request on a recording wire, with an observer that records what it is told. */
function observedRequest(): { request: InboundRequest; told: boolean[]; wire: ReturnType<typeof recordingWire> } {
  const told: boolean[] = [];
  const observer: AnswerObserver = (isError) => void told.push(isError);
  const wire = recordingWire();
  return { request: new InboundRequest(1, 'm', wire, undefined, observer), told, wire };
}

describe('InboundRequest, from outside', () => {
  it('rejects an assignment to isCancelled, at compile time and at run time', () => {
    const request = new InboundRequest(1, 'm', recordingWire());
    expect(() => {
      // @ts-expect-error isCancelled is read-only: only markCancelledByPeer() sets it.
      request.isCancelled = true;
    }).to.throw(TypeError);
    expect(request.isCancelled).to.equal(false);
  });

  it('rejects an assignment to rawId, at compile time and at run time: the raw id is a constructor argument', () => {
    const request = new InboundRequest(1, 'm', recordingWire(), '1.0');
    expect(() => {
      // @ts-expect-error rawId is read-only.
      request.rawId = '2';
    }).to.throw(TypeError);
    expect(request.rawId).to.equal('1.0');
  });

  it('rejects an assignment to state, at compile time and at run time', () => {
    const request = new InboundRequest(1, 'm', recordingWire());
    expect(() => {
      // @ts-expect-error state is read-only: events move it.
      request.state = 'answered';
    }).to.throw(TypeError);
    expect(request.state).to.equal('running');
  });

  it('has no answer callback to assign: one set from outside is a compile error and is never called', () => {
    const request = new InboundRequest(1, 'm', recordingWire());
    const calls: boolean[] = [];
    // @ts-expect-error the answer observer is a constructor argument, not a field.
    request.onAnswer = (isError: boolean) => calls.push(isError);
    request.deliver('ok', undefined);
    expect(calls).to.deep.equal([]);
  });
});

describe('InboundRequest#markCancelledByPeer()', () => {
  it('makes isCancelled true, once, and a later answer leaves it true', () => {
    const { request } = observedRequest();
    request.markCancelledByPeer();
    request.markCancelledByPeer();
    request.answer(undefined, RpcError.requestCancelled().toJSON());
    expect(request.isCancelled).to.equal(true);
  });

  it('does nothing once the request is answered', () => {
    const { request } = observedRequest();
    request.answer('done', undefined);
    request.markCancelledByPeer();
    expect(request.isCancelled).to.equal(false);
  });
});

describe('InboundRequest: the answer observer given to the constructor', () => {
  it('is told false, once, when the request is answered with a result', () => {
    const { request, told } = observedRequest();
    request.answer('done', undefined);
    request.deliver('again', undefined);
    expect(told).to.deep.equal([false]);
  });

  it('is told true when the request is answered with an error', () => {
    const { request, told } = observedRequest();
    request.answer(undefined, RpcError.invalidParams('no').toJSON());
    expect(told).to.deep.equal([true]);
  });

  it('is told true by the automatic answer of a disposed responder', () => {
    const { request, told, wire } = observedRequest();
    request.dispose();
    request.handlerFinished({});
    expect(told).to.deep.equal([true]);
    expect(wire.answers).to.have.length(1);
  });

  it('is not told anything when the request is abandoned (the connection closed)', () => {
    const { request, told } = observedRequest();
    request.abandon(undefined);
    expect(told).to.deep.equal([]);
  });
});
