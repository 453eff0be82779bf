/**
 * The fake model APIs of `--model-stub`, driven over HTTP with requests shaped as each agent sends
 * them: every API streams its reply one word per event in its own shapes, answers `echo: ` and the
 * prompt to a prompt holding `[echo]`, holds a `[hold]` turn after its first word, and makes a
 * scripted tool call and answers its result. `startModelStub()` points each agent at its fake.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeAnthropicServer } from '../../lib/check/fake-models/anthropic-messages';
import { startFakeGeminiServer } from '../../lib/check/fake-models/gemini';
import type { FakeModelBackend } from '../../lib/check/fake-models/host';
import { startFakeChatServer } from '../../lib/check/fake-models/openai-chat';
import { startFakeModelServer } from '../../lib/check/fake-models/openai-responses';
import { startModelStub, stubbedAgentOf } from '../../lib/check/model-stub';

type Json = Record<string, any>;

/** The `data` of each server-sent event of a response, parsed (`[DONE]` kept as the string). */
function eventsOf(text: string): (Json | string)[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice('data: '.length))
    .map((data) => (data === '[DONE]' ? data : (JSON.parse(data) as Json)));
}

/** One fake API as a test drives it: a turn's request, and how to read its answer. */
interface ApiUnderTest {
  readonly name: string;
  start(): Promise<FakeModelBackend>;
  /** The path and body of a streamed turn whose prompt is `text`, offering `tool`, carrying a result for `callId`. */
  turn(text: string, tool?: string, result?: { callId: string; tool: string }): { path: string; body: unknown };
  /** The words of a streamed answer, in order. */
  words(events: (Json | string)[]): string[];
  /** The id and name of the tool call a streamed answer makes. */
  call(events: (Json | string)[]): { id: string; name: string };
  /** The events that end an answer, as `[first, last]` marks to assert. */
  ending(events: (Json | string)[]): unknown;
}

const json = (events: (Json | string)[]): Json[] => events.filter((event): event is Json => typeof event !== 'string');

const APIS: readonly (ApiUnderTest & { readonly ends: unknown })[] = [
  {
    name: 'Gemini API (gemini-cli)',
    start: () => startFakeGeminiServer(),
    turn: (text, tool, result) => ({
      path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
      body: {
        contents: [
          { role: 'user', parts: [{ text }] },
          ...(result
            ? [{ role: 'user', parts: [{ functionResponse: { id: result.callId, name: result.tool, response: { output: 'ok' } } }] }]
            : []),
        ],
        ...(tool ? { tools: [{ functionDeclarations: [{ name: tool }] }] } : {}),
      },
    }),
    words: (events) =>
      json(events)
        .flatMap((event) => event.candidates[0].content.parts.map((part: Json) => part.text ?? ''))
        .filter((text) => text !== ''),
    call: (events) => json(events)[0]!.candidates[0].content.parts[0].functionCall,
    ending: (events) => [json(events).at(-1)!.candidates[0].finishReason, typeof json(events).at(-1)!.usageMetadata.totalTokenCount],
    ends: ['STOP', 'number'],
  },
  {
    name: 'OpenAI Chat Completions API (opencode)',
    start: () => startFakeChatServer(),
    turn: (text, tool, result) => ({
      path: '/v1/chat/completions',
      body: {
        stream: true,
        messages: [{ role: 'user', content: text }, ...(result ? [{ role: 'tool', tool_call_id: result.callId, content: 'ok' }] : [])],
        ...(tool ? { tools: [{ type: 'function', function: { name: tool, parameters: {} } }] } : {}),
      },
    }),
    words: (events) => json(events).flatMap((event) => (event.choices[0]?.delta?.content ? [event.choices[0].delta.content] : [])),
    call: (events) => {
      const call = json(events).find((event) => event.choices[0]?.delta?.tool_calls)!.choices[0].delta.tool_calls[0];
      return { id: call.id, name: call.function.name };
    },
    ending: (events) => [json(events).at(-2)!.choices[0].finish_reason, typeof json(events).at(-1)!.usage.total_tokens, events.at(-1)],
    ends: ['stop', 'number', '[DONE]'],
  },
  {
    name: 'Anthropic Messages API (Claude agents)',
    start: () => startFakeAnthropicServer(),
    turn: (text, tool, result) => ({
      path: '/v1/messages',
      body: {
        stream: true,
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text }, ...(result ? [{ type: 'tool_result', tool_use_id: result.callId, content: 'ok' }] : [])],
          },
        ],
        ...(tool ? { tools: [{ name: tool }] } : {}),
      },
    }),
    words: (events) =>
      json(events).flatMap((event) => (event.type === 'content_block_delta' && event.delta.text ? [event.delta.text] : [])),
    call: (events) => json(events).find((event) => event.type === 'content_block_start')!.content_block,
    // Every usage member the API sends: the Claude agents add up the token counts.
    ending: (events) => [
      json(events).at(-1)!.type,
      Object.keys(json(events).find((event) => event.type === 'message_delta')!.usage).sort(),
    ],
    ends: [
      'message_stop',
      ['cache_creation', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'input_tokens', 'output_tokens', 'service_tier'],
    ],
  },
  {
    name: 'OpenAI Responses API (codex)',
    start: () => startFakeModelServer(),
    turn: (text, tool, result) => ({
      path: '/v1/responses',
      body: {
        stream: true,
        input: [
          { role: 'user', content: [{ type: 'input_text', text }] },
          ...(result ? [{ type: 'function_call_output', call_id: result.callId, output: 'ok' }] : []),
        ],
        ...(tool ? { tools: [{ type: 'function', name: tool }] } : {}),
      },
    }),
    words: (events) => json(events).flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])),
    call: (events) => {
      const item = json(events).find((event) => event.type === 'response.output_item.done')!.item;
      return { id: item.call_id, name: item.name };
    },
    ending: (events) => [json(events).at(-1)!.type],
    ends: ['response.completed'],
  },
];

for (const api of APIS) {
  describe(`the fake ${api.name}`, () => {
    let server: FakeModelBackend;
    beforeEach(async () => (server = await api.start()));
    afterEach(() => server.close());

    const post = (request: { path: string; body: unknown }): Promise<Response> =>
      fetch(`${server.baseUrl.replace(/\/v1$/, '')}${request.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request.body),
      });

    it('streams its reply one word per event, then ends the answer', async () => {
      const events = eventsOf(await (await post(api.turn('Say hello.'))).text());
      expect(api.words(events)).to.deep.equal(['Hello', ' from', ' the', ' fake', ' model.']);
      expect(api.ending(events)).to.deep.equal(api.ends);
    });

    it('answers "echo: " and the prompt to a prompt holding [echo]', async () => {
      const events = eventsOf(await (await post(api.turn('Reply with apricot. [echo]'))).text());
      expect(api.words(events).join('')).to.equal('echo: Reply with apricot.');
    });

    it('holds a [hold] turn after its first word until it is finished', async () => {
      const response = await post(api.turn('Count slowly. [hold]', 'recite'));
      const reader = response.body!.getReader();
      let text = '';
      while (!api.words(eventsOf(text)).includes('Hello')) text += new TextDecoder().decode((await reader.read()).value);
      const held = await server.nextHeldTurn();
      held.finish();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
      expect(api.words(eventsOf(text)).join('')).to.equal(server.reply);
    });

    it('makes a scripted tool call, and answers the request carrying its result with the final text', async () => {
      const script = server.callTool({ tool: 'recite', arguments: { word: 'xylophone' }, finalText: 'The tool said it.' });
      const call = api.call(eventsOf(await (await post(api.turn('Use the tool', 'recite'))).text()));
      expect(call).to.include({ id: script.callId, name: 'recite' });
      const answer = eventsOf(await (await post(api.turn('Use the tool', 'recite', { callId: script.callId, tool: 'recite' }))).text());
      expect(api.words(answer).join('')).to.equal('The tool said it.');
      expect((await script.result()).callId).to.equal(script.callId);
    });
  });
}

describe("the fake Anthropic Messages API and the Claude Code CLI's own requests", () => {
  let server: FakeModelBackend;
  beforeEach(async () => (server = await startFakeAnthropicServer()));
  afterEach(() => server.close());

  it('answers whole a [hold] request that offers no tools (a session title quoting the prompt), and holds the turn that does', async () => {
    const request = (tools: unknown[]): Promise<Response> =>
      fetch(`${server.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ stream: true, messages: [{ role: 'user', content: '<session>\nSay hello [hold]\n</session>' }], tools }),
      });
    const title = eventsOf(await (await request([])).text());
    expect(json(title).at(-1)!.type).to.equal('message_stop');
    const turn = request([{ name: 'Bash' }]);
    (await server.nextHeldTurn()).finish();
    expect(json(eventsOf(await (await turn).text())).at(-1)!.type).to.equal('message_stop');
  });
});

describe('startModelStub()', () => {
  it('knows gemini-cli and opencode by their packages and programs', () => {
    expect(stubbedAgentOf(['npx', '@google/gemini-cli', '--acp'])).to.equal('gemini-cli');
    expect(stubbedAgentOf(['/usr/local/bin/gemini', '--acp'])).to.equal('gemini-cli');
    expect(stubbedAgentOf(['node_modules/.bin/opencode', 'acp'])).to.equal('opencode');
    expect(stubbedAgentOf(['my-agent', '--gemini-ish'])).to.equal(undefined);
  });

  it('points gemini-cli at its fake with GOOGLE_GEMINI_BASE_URL and a key, in a home whose settings send nothing', async () => {
    const stub = await startModelStub('gemini-cli', { PATH: process.env.PATH, GEMINI_API_KEY: 'real-key', XDG_CONFIG_HOME: '/elsewhere' });
    try {
      expect(stub.env)
        .to.include({ HOME: stub.home, GOOGLE_GEMINI_BASE_URL: stub.server.baseUrl })
        .and.not.have.property('XDG_CONFIG_HOME');
      expect(stub.env.GEMINI_API_KEY).to.not.equal('real-key');
      const settings = JSON.parse(readFileSync(join(stub.home, '.gemini', 'settings.json'), 'utf8')) as Json;
      expect(settings.privacy).to.deep.equal({ usageStatisticsEnabled: false });
    } finally {
      await stub.close();
    }
  });

  it('gives opencode a provider whose baseURL is its fake, and makes its model the default', async () => {
    const stub = await startModelStub('opencode', { PATH: process.env.PATH });
    try {
      const config = JSON.parse(readFileSync(join(stub.home, '.config', 'opencode', 'opencode.json'), 'utf8')) as Json;
      expect(config.provider.fake.options.baseURL).to.equal(stub.server.baseUrl);
      expect(config.model).to.equal('fake/fake-model');
      expect(stub.env).to.include({ OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1' });
    } finally {
      await stub.close();
    }
  });

  it("puts opencode's npm in offline mode: the @opencode-ai/plugin install it runs at start asks no registry", async () => {
    const stub = await startModelStub('opencode', { PATH: process.env.PATH, npm_config_offline: 'false' });
    try {
      expect(stub.env).to.include({ npm_config_offline: 'true' });
    } finally {
      await stub.close();
    }
  });
});
