/**
 * The fake models' tool-call scripts, driven over HTTP as an agent would (no real peer needed): the
 * call on the first request offering the tool, the final text once a request carries its result,
 * and a recorded error when the tool is not offered.
 */
import { expect } from 'chai';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../lib/check/fake-models/anthropic-messages';
import { startFakeModelServer, type FakeModelServer } from '../../lib/check/fake-models/openai-responses';

/** The `data` of each server-sent event of a response, parsed. */
async function events(response: Response): Promise<Record<string, unknown>[]> {
  const text = await response.text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>);
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>[]> {
  return events(await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
}

describe('the fake Responses API model (codex) with a tool-call script', () => {
  let server: FakeModelServer;
  const tools = [
    { type: 'function', name: 'exec_command', parameters: {} },
    { type: 'namespace', name: 'mcp__probe', tools: [{ type: 'function', name: 'recite', parameters: {} }] },
  ];
  const user = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Use the tool' }] };

  beforeEach(async () => {
    server = await startFakeModelServer();
  });
  afterEach(() => server.close());

  it("answers the first request with a function_call inside the tool's namespace", async () => {
    const script = server.callTool({ tool: 'probe__recite', arguments: { word: 'xylophone' }, finalText: 'Done.' });
    const answer = await post(`${server.baseUrl}/responses`, { input: [user], tools, stream: true });
    const done = answer.find((event) => event.type === 'response.output_item.done');
    expect(done?.item).to.deep.equal({
      type: 'function_call',
      id: 'fc_resp_1',
      call_id: script.callId,
      name: 'recite',
      namespace: 'mcp__probe',
      arguments: '{"word":"xylophone"}',
      status: 'completed',
    });
    expect(answer.at(-1)?.type).to.equal('response.completed');
    expect((await script.called()).tool.qualifiedName).to.equal('mcp__probe__recite');
  });

  it("answers the request carrying the call's function_call_output with the final text, and records the result", async () => {
    const script = server.callTool({ tool: 'recite', arguments: { word: 'xylophone' }, finalText: 'The tool said it.' });
    await post(`${server.baseUrl}/responses`, { input: [user], tools, stream: true });
    const output = { type: 'function_call_output', call_id: script.callId, output: 'The probe recites: xylophone' };
    const answer = await post(`${server.baseUrl}/responses`, { input: [user, output], tools, stream: true });
    const deltas = answer.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta);
    expect(deltas.join('')).to.equal('The tool said it.');
    expect((await script.result()).text).to.equal('The probe recites: xylophone');
  });

  it('records an error and answers its usual reply when the tool is not offered', async () => {
    const script = server.callTool({ tool: 'missing', arguments: {}, finalText: 'Done.' });
    const answer = await post(`${server.baseUrl}/responses`, { input: [user], tools, stream: true });
    const deltas = answer.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta);
    expect(deltas.join('')).to.equal(server.reply);
    expect(server.toolErrors.items).to.deep.equal(['the request does not offer tool missing; it offers: exec_command, mcp__probe__recite']);
    expect(script.calls.items).to.deep.equal([]);
  });
});

describe('the fake Messages API model (Claude) with a tool-call script', () => {
  let server: FakeAnthropicServer;
  const tools = [{ name: 'Bash' }, { name: 'mcp__probe__recite' }];
  const user = { role: 'user', content: [{ type: 'text', text: 'Use the tool' }] };

  beforeEach(async () => {
    server = await startFakeAnthropicServer();
  });
  afterEach(() => server.close());

  it('answers the first streamed request with a tool_use block and stop_reason tool_use', async () => {
    const script = server.callTool({ tool: 'probe__recite', arguments: { word: 'xylophone' }, finalText: 'Done.' });
    const answer = await post(`${server.baseUrl}/v1/messages`, { model: 'm', messages: [user], tools, stream: true });
    expect(answer.map((event) => event.type)).to.deep.equal([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(answer[1]?.content_block).to.deep.equal({ type: 'tool_use', id: script.callId, name: 'mcp__probe__recite', input: {} });
    expect(answer[2]?.delta).to.deep.equal({ type: 'input_json_delta', partial_json: '{"word":"xylophone"}' });
    expect(answer[4]?.delta).to.deep.include({ stop_reason: 'tool_use' });
  });

  it("answers the request carrying the call's tool_result with the final text, and records the result", async () => {
    const script = server.callTool({ tool: 'recite', arguments: { word: 'xylophone' }, finalText: 'The tool said it.' });
    await post(`${server.baseUrl}/v1/messages`, { model: 'm', messages: [user], tools, stream: true });
    const result = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: script.callId, content: [{ type: 'text', text: 'recited' }] }],
    };
    const answer = await post(`${server.baseUrl}/v1/messages`, { model: 'm', messages: [user, result], tools, stream: true });
    const deltas = answer.filter((event) => event.type === 'content_block_delta').map((event) => (event.delta as { text?: unknown }).text);
    expect(deltas.join('')).to.equal('The tool said it.');
    expect(await script.result()).to.deep.include({ callId: script.callId, text: 'recited' });
  });

  it('records an error and answers its usual reply when the tool is not offered', async () => {
    server.callTool({ tool: 'missing', arguments: {}, finalText: 'Done.' });
    const answer = await post(`${server.baseUrl}/v1/messages`, { model: 'm', messages: [user], tools, stream: true });
    const deltas = answer.filter((event) => event.type === 'content_block_delta').map((event) => (event.delta as { text?: unknown }).text);
    expect(deltas.join('')).to.equal(server.reply);
    expect(server.toolErrors.items).to.deep.equal(['the request does not offer tool missing; it offers: Bash, mcp__probe__recite']);
  });
});
