/**
 * The passthrough proxy on its own stdio, driven with raw NDJSON as a conductor would (needs the
 * build; see useBuild() in spec/helpers/processes.ts).
 */
import { expect } from 'chai';
import type { LineReader } from '../helpers/lines';
import { hasMethod, isResponseTo } from '../helpers/messages';
import { PASSTHROUGH_PROXY, type SpawnedProcess, spawnScript, useBuild } from '../helpers/processes';

describe('examples/passthrough-proxy', function () {
  this.timeout(20000);
  useBuild();

  let proxy: SpawnedProcess;
  let stdout: LineReader;
  let exited: Promise<number | null>;
  const send = (line: string): void => proxy.send(line);
  beforeEach(() => {
    proxy = spawnScript(PASSTHROUGH_PROXY);
    stdout = proxy.stdout;
    exited = proxy.exited.then((exit) => exit.code);
  });
  afterEach(async () => {
    await proxy.stop();
  });

  it('refuses a plain initialize with -32600', async () => {
    send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}');
    expect(await stdout.take(isResponseTo(1))).to.equal(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request","data":"`initialize` is not accepted on this connection"}}',
    );
  });

  it('forwards proxy/initialize to its successor, a client request enveloped and a successor request plain', async () => {
    send('{"jsonrpc":"2.0","id":"c1","method":"proxy/initialize","params":{"protocolVersion":2}}');
    expect(await stdout.take()).to.equal(
      '{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":2}}}',
    );
    send('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":2}}');
    expect(await stdout.take()).to.equal('{"jsonrpc":"2.0","id":"c1","result":{"protocolVersion":2}}');
    send('{"jsonrpc":"2.0","id":"c2","method":"session/new","params":{"cwd":"/"}}');
    expect(await stdout.take()).to.equal(
      '{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/"}}}',
    );
    send('{"jsonrpc":"2.0","id":"s1","method":"proxy/successor","params":{"method":"fs/read","params":{"path":"/x"}}}');
    expect(await stdout.take(hasMethod('fs/read'))).to.equal('{"jsonrpc":"2.0","id":3,"method":"fs/read","params":{"path":"/x"}}');
  });

  it('exits 0 when its stdin ends', async () => {
    proxy.child.stdin!.end();
    expect(await exited).to.equal(0);
  });
});
