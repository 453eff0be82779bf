import { expect } from 'chai';
import { createConnectionPair, createStderrLogger, type CloseReason, type Connection } from '../../lib';
import { nextEvent } from '../helpers/events';

describe('createConnectionPair()', () => {
  let left: Connection;
  let right: Connection;
  afterEach(() => Promise.all([left.close(), right.close()]));

  it('joins two connections: each side can call the other', async () => {
    [left, right] = createConnectionPair();
    left.onRequest('whoami', () => 'left');
    right.onRequest('whoami', () => 'right');
    expect([await left.sendRequest('whoami'), await right.sendRequest('whoami')]).to.deep.equal(['right', 'left']);
  });

  it('carries messages as JSON bytes, as a real transport would', async () => {
    [left, right] = createConnectionPair();
    right.onRequest('echo', (params: unknown) => params);
    const result = await left.sendRequest('echo', { date: new Date(0), gone: undefined, list: [undefined] });
    expect(result).to.deep.equal({ date: '1970-01-01T00:00:00.000Z', list: [null] });
  });

  it("closes the other side with 'input ended' when one side closes", async () => {
    [left, right] = createConnectionPair();
    const closed = nextEvent<[CloseReason]>(right, 'close');
    await left.close();
    expect(await closed).to.deep.equal(['input ended', undefined]);
  });

  it('gives the second connection its own options when they are passed', async () => {
    const traced: string[] = [];
    const logger = createStderrLogger({ level: 'trace', name: 'right', write: (text) => void traced.push(text) });
    [left, right] = createConnectionPair({}, { logger });
    right.onRequest('ping', () => 'pong');
    await left.sendRequest('ping');
    expect(traced.map((line) => line.replace(/^\S+ /, ''))).to.deep.equal([
      'right trace <- {"jsonrpc":"2.0","id":1,"method":"ping"}\n',
      'right trace -> {"jsonrpc":"2.0","id":1,"result":"pong"}\n',
    ]);
  });
});
