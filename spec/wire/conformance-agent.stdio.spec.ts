/**
 * The conformance agent over child-process stdio, method by method, with exact NDJSON lines.
 * Needs dist/: useBuild() builds it when it is missing or stale.
 */
import { expect } from 'chai';
import { CLIENT_INIT, IdNamer, INIT_RESULT, initializedAgent, spawnAgent } from '../helpers/conformance-agent';
import { type Exit, type SpawnedProcess, useBuild } from '../helpers/processes';

const CANCEL = (id: number | string): string =>
  `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${JSON.stringify(id)}}}`;
const CANCELLED = (id: number | string): string =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32800,"message":"Request cancelled"}}`;

describe('conformance agent (stdio)', () => {
  let agent: SpawnedProcess;
  let expectedExit: Exit;

  beforeEach(() => {
    expectedExit = { code: 0, signal: null };
  });

  useBuild();

  afterEach(async () => {
    const exit = await agent.stop();
    expect(exit, agent.stderr.text).to.deep.equal(expectedExit);
  });

  describe('initialize', () => {
    beforeEach(() => {
      agent = spawnAgent();
    });

    it('answers the ACP v2 result with the package version', async () => {
      expect(await agent.request(1, 'initialize', CLIENT_INIT)).to.equal(`{"jsonrpc":"2.0","id":1,"result":${INIT_RESULT}}`);
    });

    it('accepts a client that sends no info and no capabilities', async () => {
      expect(await agent.request(1, 'initialize', { protocolVersion: 2 })).to.equal(`{"jsonrpc":"2.0","id":1,"result":${INIT_RESULT}}`);
    });

    it('refuses every other request before initialize with -32600 naming the method', async () => {
      expect(await agent.request(1, '_test/echo', {})).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request","data":"`_test/echo` needs a completed initialize first"}}',
      );
      expect(await agent.request(2, 'no/such')).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request","data":"`no/such` needs a completed initialize first"}}',
      );
    });

    it('refuses a second initialize with -32600 and stays ready', async () => {
      await agent.request(1, 'initialize', CLIENT_INIT);
      expect(await agent.request(2, 'initialize', CLIENT_INIT)).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request","data":"the connection is already initialized"}}',
      );
      expect(await agent.request(3, '_test/echo', [1])).to.equal('{"jsonrpc":"2.0","id":3,"result":[1]}');
    });

    it('refuses initialize while one is in progress', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...CLIENT_INIT, _meta: { test: 'slow', ms: 50 } } });
      expect(await agent.request(2, 'initialize', CLIENT_INIT)).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request","data":"initialize is already in progress"}}',
      );
      expect(await agent.stdout.take()).to.equal(`{"jsonrpc":"2.0","id":1,"result":${INIT_RESULT}}`);
    });

    it('fails on _meta.test "error" and accepts a retry', async () => {
      expect(await agent.request(1, 'initialize', { ...CLIENT_INIT, _meta: { test: 'error' } })).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"initialize failed on request"}}',
      );
      expect(await agent.request(2, 'initialize', CLIENT_INIT)).to.equal(`{"jsonrpc":"2.0","id":2,"result":${INIT_RESULT}}`);
    });

    it('answers a dropped initialize automatically with -32603 and accepts a retry', async () => {
      expect(await agent.request(1, 'initialize', { ...CLIENT_INIT, _meta: { test: 'drop' } })).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"request handler dropped its responder for `initialize`"}}',
      );
      expect(await agent.request(2, 'initialize', CLIENT_INIT)).to.equal(`{"jsonrpc":"2.0","id":2,"result":${INIT_RESULT}}`);
    });

    it('answers -32800 when a slow initialize is cancelled, and accepts a retry', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...CLIENT_INIT, _meta: { test: 'slow', ms: 60_000 } } });
      agent.send(CANCEL(1));
      expect(await agent.stdout.take()).to.equal(CANCELLED(1));
      expect(await agent.request(2, 'initialize', CLIENT_INIT)).to.equal(`{"jsonrpc":"2.0","id":2,"result":${INIT_RESULT}}`);
    });

    it('delivers notifications received before initialize', async () => {
      agent.send({ jsonrpc: '2.0', method: '_early', params: { n: 1 } });
      await agent.request(1, 'initialize', CLIENT_INIT);
      expect(await agent.request(2, '_test/received')).to.equal(
        '{"jsonrpc":"2.0","id":2,"result":{"notifications":[{"method":"_early","params":{"n":1}}]}}',
      );
    });
  });

  describe('_test/* methods', () => {
    beforeEach(async () => {
      agent = await initializedAgent();
    });

    it('_test/echo answers its params, or null without params', async () => {
      expect(await agent.request(1, '_test/echo', { a: [1, 'two', null] })).to.equal(
        '{"jsonrpc":"2.0","id":1,"result":{"a":[1,"two",null]}}',
      );
      expect(await agent.request(2, '_test/echo')).to.equal('{"jsonrpc":"2.0","id":2,"result":null}');
    });

    it('_test/sleep answers {"slept":ms} when not cancelled', async () => {
      expect(await agent.request(1, '_test/sleep', { ms: 5 })).to.equal('{"jsonrpc":"2.0","id":1,"result":{"slept":5}}');
    });

    it('_test/sleep answers -32800 at once when cancelled (onCancel "error", the default)', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 60_000 } });
      agent.send(CANCEL(1));
      expect(await agent.stdout.take()).to.equal(CANCELLED(1));
    });

    it('_test/sleep answers {"partial":true} at once when cancelled with onCancel "partial"', async () => {
      agent.send({ jsonrpc: '2.0', id: 'p', method: '_test/sleep', params: { ms: 60_000, onCancel: 'partial' } });
      agent.send(CANCEL('p'));
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":"p","result":{"partial":true}}');
    });

    it('_test/sleep finishes normally when cancelled with onCancel "ignore"', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 30, onCancel: 'ignore' } });
      agent.send(CANCEL(1));
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":1,"result":{"slept":30}}');
    });

    it('_test/sleep answers -32602 for invalid params', async () => {
      expect(await agent.request(1, '_test/sleep', { ms: -1 })).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"`ms` must be a non-negative number of milliseconds"}}',
      );
    });

    it('_test/drop is answered -32603 by the library once the responder is collected', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/drop' });
      agent.send({ jsonrpc: '2.0', id: 2, method: '_test/gc' });
      expect((await agent.stdout.takeLines(2)).sort()).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"request handler dropped its responder for `_test/drop`"}}',
        '{"jsonrpc":"2.0","id":2,"result":{"ok":true}}',
      ]);
    });

    it('_test/drop {afterMs} is answered -32800 when the peer had cancelled it', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/drop', params: { afterMs: 20 } });
      agent.send(CANCEL(1));
      expect(await agent.stdout.take()).to.equal(CANCELLED(1));
    });

    it('_test/throw answers exactly the RPC error given', async () => {
      expect(await agent.request(1, '_test/throw', { code: -32001, message: 'Nope', data: { why: 'test' } })).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Nope","data":{"why":"test"}}}',
      );
      expect(await agent.request(2, '_test/throw', { code: 7, message: 'no data' })).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":7,"message":"no data"}}',
      );
    });

    it('_test/throwPlain answers -32603 with a string data', async () => {
      expect(await agent.request(1, '_test/throwPlain', { message: 'boom' })).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"Error: boom"}}',
      );
    });

    it('_test/notifyThrow sends nothing, logs on stderr and the agent keeps working', async () => {
      agent.send({ jsonrpc: '2.0', method: '_test/notifyThrow' });
      expect(await agent.request(1, '_test/echo', ['still here'])).to.equal('{"jsonrpc":"2.0","id":1,"result":["still here"]}');
      await agent.stderr.find((_, line) => line.includes('the handler of notification `_test/notifyThrow` failed'));
      expect(agent.stdout.untaken).to.deep.equal([]);
    });

    it('_test/hold answers {"held":true} from a timer, after later requests', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/hold', params: { ms: 50 } });
      agent.send({ jsonrpc: '2.0', id: 2, method: '_test/echo', params: ['first'] });
      expect(await agent.stdout.takeLines(2)).to.deep.equal([
        '{"jsonrpc":"2.0","id":2,"result":["first"]}',
        '{"jsonrpc":"2.0","id":1,"result":{"held":true}}',
      ]);
    });

    it('_test/gc answers {"ok":true}', async () => {
      expect(await agent.request(1, '_test/gc')).to.equal('{"jsonrpc":"2.0","id":1,"result":{"ok":true}}');
    });

    it('_test/received lists every notification in order, $/cancel_request included', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 60_000 } });
      agent.send(CANCEL(1));
      await agent.stdout.take();
      agent.send(CANCEL('unknown'));
      agent.send({ jsonrpc: '2.0', method: '_test/notifyThrow' });
      agent.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'none' } });
      agent.send({ jsonrpc: '2.0', method: '_custom' });
      expect(await agent.request(2, '_test/received')).to.equal(
        '{"jsonrpc":"2.0","id":2,"result":{"notifications":[' +
          '{"method":"$/cancel_request","params":{"requestId":1}},{"method":"$/cancel_request","params":{"requestId":"unknown"}},' +
          '{"method":"_test/notifyThrow"},{"method":"session/cancel","params":{"sessionId":"none"}},{"method":"_custom"}]}}',
      );
    });
  });

  describe('_test/callClient', () => {
    beforeEach(async () => {
      agent = await initializedAgent();
    });

    it('answers {"response":result} with the client\'s result', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/callClient', params: { method: 'client/ping', params: { x: 1 } } });
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":1,"method":"client/ping","params":{"x":1}}');
      agent.send('{"jsonrpc":"2.0","id":1,"result":{"pong":true}}');
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":1,"result":{"response":{"pong":true}}}');
    });

    it('answers {"response":error} with the client\'s error object', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/callClient', params: { method: 'client/x' } });
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":1,"method":"client/x"}');
      agent.send('{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":"client/x"}}');
      expect(await agent.stdout.take()).to.equal(
        '{"jsonrpc":"2.0","id":1,"result":{"response":{"code":-32601,"message":"Method not found","data":"client/x"}}}',
      );
    });

    it('cancels its request after cancelAfterMs and still waits for the answer', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/callClient', params: { method: 'client/slow', cancelAfterMs: 10 } });
      expect(await agent.stdout.takeLines(2)).to.deep.equal(['{"jsonrpc":"2.0","id":1,"method":"client/slow"}', CANCEL(1)]);
      agent.send(CANCELLED(1));
      expect(await agent.stdout.take()).to.equal(
        '{"jsonrpc":"2.0","id":1,"result":{"response":{"code":-32800,"message":"Request cancelled"}}}',
      );
    });

    it('with drop: true, cancels the dropped request and answers {"dropped":true}', async () => {
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/callClient', params: { method: 'client/dropped', drop: true } });
      expect(await agent.stdout.takeLines(3)).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"method":"client/dropped"}',
        CANCEL(1),
        '{"jsonrpc":"2.0","id":1,"result":{"dropped":true}}',
      ]);
      agent.send(CANCELLED(1));
    });
  });

  describe('sessions', () => {
    const PROMPT = [{ type: 'text', text: 'hello acp' }];
    let names: IdNamer;
    let sessionId: string;

    beforeEach(async () => {
      agent = await initializedAgent();
      names = new IdNamer();
      expect(names.name(await agent.request(1, 'session/new', { cwd: '/tmp', mcpServers: [] }))).to.equal(
        '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"<id1>"}}',
      );
      sessionId = names.idOf('<id1>');
    });

    const update = (json: string): string => `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"<id1>","update":${json}}}`;

    it('session/prompt answers {messageId}, then streams user_message, running, chunks and idle end_turn', async () => {
      agent.send({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: PROMPT } });
      expect(names.names(await agent.stdout.takeLines(7))).to.deep.equal([
        '{"jsonrpc":"2.0","id":2,"result":{"messageId":"<id2>"}}',
        update('{"sessionUpdate":"user_message","messageId":"<id2>","content":[{"type":"text","text":"hello acp"}]}'),
        update('{"sessionUpdate":"state_update","state":"running"}'),
        update('{"sessionUpdate":"agent_message_chunk","messageId":"<id3>","content":{"type":"text","text":"echo: "}}'),
        update('{"sessionUpdate":"agent_message_chunk","messageId":"<id3>","content":{"type":"text","text":"hello "}}'),
        update('{"sessionUpdate":"agent_message_chunk","messageId":"<id3>","content":{"type":"text","text":"acp"}}'),
        update('{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}'),
      ]);
    });

    it('session/cancel ends the running turn with idle "cancelled"', async () => {
      agent.send({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: PROMPT, _meta: { workMs: 60_000 } } });
      expect(names.names(await agent.stdout.takeLines(4))[3]).to.equal(
        update('{"sessionUpdate":"agent_message_chunk","messageId":"<id3>","content":{"type":"text","text":"echo: "}}'),
      );
      agent.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
      expect(names.name(await agent.stdout.take())).to.equal(
        update('{"sessionUpdate":"state_update","state":"idle","stopReason":"cancelled"}'),
      );
    });

    it('a $/cancel_request before insertion answers -32800 and inserts nothing', async () => {
      agent.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'session/prompt',
        params: { sessionId, prompt: PROMPT, _meta: { insertDelayMs: 60_000 } },
      });
      agent.send(CANCEL(2));
      expect(await agent.stdout.take()).to.equal(CANCELLED(2));
      expect(await agent.request(3, '_test/echo', ['next'])).to.equal('{"jsonrpc":"2.0","id":3,"result":["next"]}');
    });

    it('a $/cancel_request after insertion leaves the answer a success and the turn running', async () => {
      agent.send({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: PROMPT, _meta: { workMs: 60_000 } } });
      expect(names.name(await agent.stdout.take())).to.equal('{"jsonrpc":"2.0","id":2,"result":{"messageId":"<id2>"}}');
      agent.send(CANCEL(2));
      expect(await agent.request(3, '_test/echo', ['after'])).to.equal('{"jsonrpc":"2.0","id":3,"result":["after"]}');
      agent.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
      const lines = names.names(await agent.stdout.takeUntil((_, line) => line.includes('"idle"')));
      expect(lines[lines.length - 1]).to.equal(update('{"sessionUpdate":"state_update","state":"idle","stopReason":"cancelled"}'));
    });

    it('session/cancel answers a prompt still waiting for insertion -32800', async () => {
      agent.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'session/prompt',
        params: { sessionId, prompt: PROMPT, _meta: { insertDelayMs: 60_000 } },
      });
      agent.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
      expect(await agent.stdout.take()).to.equal(CANCELLED(2));
    });

    it('session/prompt answers -32002 for an unknown session', async () => {
      expect(await agent.request(2, 'session/prompt', { sessionId: 'nope', prompt: PROMPT })).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Resource not found","data":{"sessionId":"nope"}}}',
      );
    });

    it('session/new answers -32602 without a cwd', async () => {
      expect(await agent.request(2, 'session/new', { mcpServers: [] })).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params","data":"`cwd` must be a string"}}',
      );
    });
  });

  describe('process', () => {
    it('exits 0 when its stdin ends, with requests still running', async () => {
      agent = await initializedAgent();
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 60_000 } });
      agent.child.stdin!.end();
      expect(await agent.exited).to.deep.equal({ code: 0, signal: null });
    });

    it('writes only protocol lines on stdout, even with ACP_WIRE_LOG=trace', async () => {
      agent = spawnAgent([], { ACP_WIRE_LOG: 'trace' });
      agent.send('not json');
      agent.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: CLIENT_INIT });
      agent.send({ jsonrpc: '2.0', method: '_test/notifyThrow' });
      agent.send({ jsonrpc: '2.0', id: 2, method: '_test/echo', params: [1] });
      agent.child.stdin!.end();
      expect(await agent.stdout.ended()).to.deep.equal([
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
        `{"jsonrpc":"2.0","id":1,"result":${INIT_RESULT}}`,
        '{"jsonrpc":"2.0","id":2,"result":[1]}',
      ]);
      expect(agent.stderr.text).to.include('trace -> {"jsonrpc":"2.0","id":2,"result":[1]}');
    });

    it('answers a line that is not JSON with -32700 and keeps reading', async () => {
      agent = spawnAgent();
      agent.send('{oops');
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
      expect(await agent.request(1, 'initialize', CLIENT_INIT)).to.equal(`{"jsonrpc":"2.0","id":1,"result":${INIT_RESULT}}`);
    });

    it('exits 2 with a usage line for an unknown argument', async () => {
      agent = spawnAgent(['--bogus']);
      expect(await agent.exited).to.deep.equal({ code: 2, signal: null });
      expect(agent.stderr.text).to.equal('usage: conformance-agent [--tcp PORT]\n');
      expectedExit = { code: 2, signal: null };
    });
  });
});
