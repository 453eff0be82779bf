/**
 * The passthrough proxy on its own stdio, driven with raw NDJSON as a conductor would (needs the
 * build; see spec/helpers/chain.ts).
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { LineQueue, PASSTHROUGH, ROOT, ensureChainBuilt, hasMethod, isResponseTo } from '../helpers/chain';

describe('examples/passthrough-proxy', function () {
  this.timeout(20000);
  before(() => ensureChainBuilt());

  let child: ChildProcess;
  let stdout: LineQueue;
  let exited: Promise<number | null>;
  const send = (line: string): void => void child.stdin!.write(`${line}\n`);
  beforeEach(() => {
    child = spawn(process.execPath, [PASSTHROUGH], { cwd: ROOT, env: { ...process.env, ACP_WIRE_LOG: '' }, stdio: ['pipe', 'pipe', 'ignore'] });
    stdout = new LineQueue(child.stdout!, 'proxy stdout');
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  });
  afterEach(async () => {
    child.stdin!.end();
    await exited;
  });

  it('refuses a plain initialize with -32600', async () => {
    send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}');
    expect(await stdout.take(isResponseTo(1))).to.equal(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request","data":"`initialize` is not accepted on this connection"}}',
    );
  });

  it('forwards proxy/initialize to its successor, a client request enveloped and a successor request plain', async () => {
    send('{"jsonrpc":"2.0","id":"c1","method":"proxy/initialize","params":{"protocolVersion":2}}');
    expect(await stdout.take()).to.equal('{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":2}}}');
    send('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":2}}');
    expect(await stdout.take()).to.equal('{"jsonrpc":"2.0","id":"c1","result":{"protocolVersion":2}}');
    send('{"jsonrpc":"2.0","id":"c2","method":"session/new","params":{"cwd":"/"}}');
    expect(await stdout.take()).to.equal('{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/"}}}');
    send('{"jsonrpc":"2.0","id":"s1","method":"proxy/successor","params":{"method":"fs/read","params":{"path":"/x"}}}');
    expect(await stdout.take(hasMethod('fs/read'))).to.equal('{"jsonrpc":"2.0","id":3,"method":"fs/read","params":{"path":"/x"}}');
  });

  it('exits 0 when its stdin ends', async () => {
    child.stdin!.end();
    expect(await exited).to.equal(0);
  });
});
