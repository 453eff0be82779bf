/**
 * Tolerating what real agents send: an error response with no `id` — codex-acp answers
 * `$/cancel_request` that way — is logged and dropped, nothing is sent back, nothing breaks, and
 * the request the cancel was for still gets its one answer. Raw lines on both ends.
 */
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { AcpClient, Connection, type Logger } from '../../lib';
import { spawnAgent } from '../helpers/conformance-agent';
import { LineReader } from '../helpers/lines';
import { useBuild, type SpawnedProcess } from '../helpers/processes';

const IDLESS_ERROR = '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":"$/cancel_request"}}';

describe('an error response without an id', () => {
  describe('received by the conformance agent (stdio)', () => {
    let agent: SpawnedProcess;

    useBuild();

    afterEach(async () => {
      expect(await agent.stop()).to.deep.equal({ code: 0, signal: null });
    });

    it("is logged and dropped; the agent's cancelled request still gets its one answer", async () => {
      agent = spawnAgent();
      await agent.request(0, 'initialize', { protocolVersion: 1 });
      agent.send({ jsonrpc: '2.0', id: 1, method: '_test/callClient', params: { method: 'client/slow', cancelAfterMs: 1 } });
      expect(await agent.stdout.takeLines(2)).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"method":"client/slow"}',
        '{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}',
      ]);
      agent.send(IDLESS_ERROR);
      agent.send('{"jsonrpc":"2.0","id":1,"result":{"late":true}}');
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":1,"result":{"response":{"late":true}}}');
      expect(await agent.request(2, '_test/echo', [2])).to.equal('{"jsonrpc":"2.0","id":2,"result":[2]}');
      expect(agent.stdout.untaken).to.deep.equal([]);
      expect(agent.stderr.text).to.include('ProtocolError: dropped a malformed response: a response needs a valid "id"');
    });
  });

  describe('received by an AcpClient', () => {
    it('is logged and dropped; the prompt whose $/cancel_request it answered still ends with its answer', async () => {
      const toClient = new PassThrough();
      const fromClient = new PassThrough();
      const warnings: string[] = [];
      const logger: Logger = { traces: false, log: (level, message) => void (level === 'warn' && warnings.push(message)) };
      const connection = new Connection(toClient, fromClient, { logger });
      const agent = new LineReader(fromClient, { label: 'client output' });
      const client = new AcpClient(connection, { protocolVersions: [1] });
      const initialized = client.initialize();
      await agent.take();
      toClient.write('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}\n');
      await initialized;

      const turn = client.prompt({ sessionId: 's', prompt: [{ type: 'text', text: 'hi' }] });
      expect(await agent.take()).to.match(/^\{"jsonrpc":"2\.0","id":2,"method":"session\/prompt",/);
      turn.request.cancel();
      expect(await agent.take()).to.equal('{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}');
      toClient.write(`${IDLESS_ERROR}\n`);
      toClient.write(
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}}}\n',
      );
      toClient.write('{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}\n');
      expect((await turn).stopReason).to.equal('end_turn');
      expect(warnings).to.deep.equal(['ProtocolError: dropped a malformed response: a response needs a valid "id"']);
      await connection.close();
      toClient.end();
      expect(agent.lines).to.have.length(3);
    });
  });
});
