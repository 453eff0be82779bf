/** connectStdio(), observed from outside: echo-peer in stdio mode is built on it. */
import { expect } from 'chai';
import { spawnFixture, stopAll, useBuild } from '../helpers/processes';

describe('connectStdio()', () => {
  useBuild();
  after(stopAll);

  it('stops reading stdin once the connection closes, so the process exits while its stdin is still open', async () => {
    const peer = spawnFixture('echo-peer');
    peer.send({ jsonrpc: '2.0', id: 1, method: 'close' });
    expect(await peer.exited).to.deep.equal({ code: 0, signal: null });
    expect(peer.child.stdin!.writableEnded).to.equal(false);
    expect(peer.stdout.lines).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":true}']);
  });

  it('leaves stdout open after the connection closed', async () => {
    const peer = spawnFixture('echo-peer', ['--goodbye']);
    peer.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['hi'] });
    await peer.stdout.waitForLines(1);
    peer.child.stdin!.end();
    expect(await peer.exited).to.deep.equal({ code: 0, signal: null });
    expect(peer.stdout.lines).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":["hi"]}', '{"goodbye":true}']);
  });
});
