/**
 * In process: a value that JSON.parse read but JSON.stringify cannot write again
 * (nested 20,000 deep) reaches a forwarding hop. The hop answers `-32603` naming the cause, or
 * reports a dropped notification as a warning, and never throws out of its input stream's handler.
 */
import { expect } from 'chai';
import {
  ForwardingError,
  NotificationHandlerError,
  ProxyComponent,
  SerializationError,
  sendProxiedMessageTo,
  type AcpWireError,
  type Responder,
} from '../../lib';
import { deeplyNestedArray } from '../helpers/fuzz';
import { RawPeer } from '../helpers/peers';

const DEEP = deeplyNestedArray(20_000);
const CAUSE = 'RangeError: Maximum call stack size exceeded';

function unserializable(reason: string, method: string): string {
  return `{"code":-32603,"message":"Internal error","data":{"reason":"${reason}","method":"${method}","cause":"${CAUSE}"}}`;
}

/** A raw peer whose connection's warnings are kept, in order. */
function rawPeer(): { raw: RawPeer; warnings: AcpWireError[] } {
  const raw = new RawPeer();
  const warnings: AcpWireError[] = [];
  raw.connection.on('warning', (warning) => warnings.push(warning));
  return { raw, warnings };
}

describe('ProxyComponent with a value that cannot be serialized again', () => {
  let raw: RawPeer;
  let warnings: AcpWireError[];
  beforeEach(async () => {
    ({ raw, warnings } = rawPeer());
    new ProxyComponent(raw.connection);
    raw.send('{"jsonrpc":"2.0","id":"c1","method":"proxy/initialize","params":{}}');
    expect(await raw.out.take()).to.equal(
      '{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{}}}',
    );
    raw.send('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect(await raw.out.take()).to.equal('{"jsonrpc":"2.0","id":"c1","result":{}}');
  });
  afterEach(() => raw.close());

  it("answers the client-side request -32603 naming the cause when the successor's answer is nested 20,000 deep", async () => {
    raw.send('{"jsonrpc":"2.0","id":"c2","method":"session/new","params":{}}');
    expect(await raw.out.take()).to.equal(
      '{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{}}}',
    );
    raw.send(`{"jsonrpc":"2.0","id":2,"result":${DEEP}}`);
    expect(await raw.out.take()).to.equal(
      `{"jsonrpc":"2.0","id":"c2","error":${unserializable('unserializable_response', 'session/new')}}`,
    );
    expect(raw.connection.isClosed).to.equal(false);
    raw.send('{"jsonrpc":"2.0","id":"c3","method":"session/new","params":{}}');
    expect(await raw.out.take()).to.equal(
      '{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/new","params":{}}}',
    );
  });

  it("answers the successor's request -32603 naming the cause when its params are nested 20,000 deep", async () => {
    raw.send(`{"jsonrpc":"2.0","id":"s1","method":"proxy/successor","params":{"method":"fs/read","params":{"a":${DEEP}}}}`);
    expect(await raw.out.take()).to.equal(`{"jsonrpc":"2.0","id":"s1","error":${unserializable('unserializable_request', 'fs/read')}}`);
  });

  it('drops a client-side notification nested 20,000 deep with a warning whose cause says why, and sends nothing', async () => {
    raw.send(`{"jsonrpc":"2.0","method":"note","params":{"a":${DEEP}}}`);
    raw.send('{"jsonrpc":"2.0","method":"note","params":{"a":1}}');
    expect(await raw.out.take()).to.equal('{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"note","params":{"a":1}}}');
    expect(warnings).to.have.length(1);
    const warning = warnings[0]!;
    expect(warning).to.be.instanceOf(NotificationHandlerError);
    expect(warning.cause).to.be.instanceOf(ForwardingError);
    expect((warning.cause as ForwardingError).cause).to.be.instanceOf(SerializationError);
    expect((warning.cause as Error).message).to.equal(
      `the notification \`note\` was not forwarded: its params cannot be serialized (${CAUSE})`,
    );
  });
});

describe('sendProxiedMessageTo() with a value that cannot be serialized again', () => {
  let upstream: RawPeer;
  let downstream: RawPeer;
  beforeEach(() => {
    upstream = new RawPeer();
    downstream = new RawPeer();
  });
  afterEach(() => Promise.all([upstream.close(), downstream.close()]));

  it('answers -32603 naming the cause when the answer was already in when it is forwarded', async () => {
    const sent = downstream.connection.sendRequest('x');
    expect(await downstream.out.take()).to.equal('{"jsonrpc":"2.0","id":1,"method":"x"}');
    downstream.send(`{"jsonrpc":"2.0","id":1,"result":${DEEP}}`);
    await sent;
    upstream.connection.onRequest('up', (_params: unknown, responder: Responder) => sent.forwardResponseTo(responder));
    upstream.send('{"jsonrpc":"2.0","id":7,"method":"up"}');
    expect(await upstream.out.take()).to.equal(`{"jsonrpc":"2.0","id":7,"error":${unserializable('unserializable_response', 'up')}}`);
  });

  it('answers a held responder -32603 naming the cause, from outside any handler', async () => {
    const held: Responder[] = [];
    upstream.connection.onRequest('up', (_params: unknown, responder: Responder) => void held.push(responder));
    upstream.send(`{"jsonrpc":"2.0","id":8,"method":"up","params":{"a":${DEEP}}}`);
    await upstream.linesBeforeProbe();
    expect(held).to.have.length(1);
    // The params as parsed, forwarded later (not inside the handler).
    sendProxiedMessageTo(downstream.connection, { a: JSON.parse(DEEP) as unknown }, held[0]!);
    expect(await upstream.out.take()).to.equal(`{"jsonrpc":"2.0","id":8,"error":${unserializable('unserializable_request', 'up')}}`);
    expect(await downstream.linesBeforeProbe()).to.deep.equal([]);
  });
});
