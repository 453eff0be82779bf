/**
 * An MCP server written with `@modelcontextprotocol/server` 2.4 holding what MCP's conformance
 * suite asks a server under test for (its tools, resources and prompts, logging, completions,
 * sampling and elicitation through `input_required`), plus a roots tool: the provider the bridge
 * specs and MCP's own judges drive through the bridge.
 */
import {
  McpServer,
  ResourceTemplate,
  completable,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  type ElicitRequestFormParams,
  type InputRequest,
} from '@modelcontextprotocol/server';
import * as z from 'zod';

/** The server's name and version (its `serverInfo`). */
export const REFERENCE_SERVER_INFO = { name: 'reference-server', version: '2.4.7' };

/** A 1×1 red PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
/** A WAV file of one silent sample (8 kHz, 8-bit mono). */
const WAV = Buffer.concat([
  Buffer.from('RIFF'),
  Buffer.from([37, 0, 0, 0]),
  Buffer.from('WAVEfmt '),
  Buffer.from([16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0]),
  Buffer.from('data'),
  Buffer.from([1, 0, 0, 0, 0x80]),
]).toString('base64');

/** The schema of a form elicitation, as the wire has it. */
type RequestedSchema = ElicitRequestFormParams['requestedSchema'];

type ToolResult = { content: { type: 'text'; text: string }[] };

function text(value: string): ToolResult {
  return { content: [{ type: 'text', text: value }] };
}

/**
 * A fresh reference server (the adapter needs one per exchange). Its capabilities: tools,
 * resources and prompts (the library adds `listChanged`), `logging` and `completions`.
 */
export function referenceMcpServer(): McpServer {
  const server = new McpServer(REFERENCE_SERVER_INFO, { capabilities: { logging: {}, completions: {} } });
  registerContentTools(server);
  registerActivityTools(server);
  registerInputTools(server);
  registerResources(server);
  registerPrompts(server);
  return server;
}

function registerContentTools(server: McpServer): void {
  const none = { inputSchema: z.object({}) };
  server.registerTool('test_simple_text', { description: 'Returns simple text', ...none }, () =>
    text('This is a simple text response for testing.'),
  );
  server.registerTool('test_image_content', { description: 'Returns an image', ...none }, () => ({
    content: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
  }));
  server.registerTool('test_audio_content', { description: 'Returns audio', ...none }, () => ({
    content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }],
  }));
  server.registerTool('test_embedded_resource', { description: 'Returns an embedded resource', ...none }, () => ({
    content: [
      {
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      },
    ],
  }));
  server.registerTool('test_multiple_content_types', { description: 'Returns text, an image and a resource', ...none }, () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' },
      },
    ],
  }));
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Tool with JSON Schema 2020-12 features',
      inputSchema: fromJsonSchema<{ name?: string }>({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
        properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
        additionalProperties: false,
      }),
    },
    (args) => text(`received ${JSON.stringify(args)}`),
  );
}

function registerActivityTools(server: McpServer): void {
  const none = { inputSchema: z.object({}) };
  server.registerTool('test_tool_with_logging', { description: 'Logs three messages at info', ...none }, async (_args, ctx) => {
    for (const message of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
      await ctx.mcpReq.log('info', message, 'reference');
    }
    return text('Tool with logging executed');
  });
  server.registerTool('test_error_handling', { description: 'Always fails', ...none }, () => {
    throw new Error('This tool intentionally returns an error for testing');
  });
  server.registerTool('test_tool_with_progress', { description: 'Reports progress 0, 50, 100', ...none }, async (_args, ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken !== undefined) {
      for (const progress of [0, 50, 100]) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100 } });
      }
    }
    return text('Tool with progress executed');
  });
}

/** Text arguments of a tool. */
type TextArgs = z.ZodObject<Record<string, z.ZodString>>;

/** A tool that asks the client for `request` (key `input`), then answers `describe(response)`. */
function askingTool(
  server: McpServer,
  name: string,
  inputSchema: TextArgs,
  request: (args: Record<string, string>) => InputRequest,
  describe: (response: unknown) => string,
): void {
  server.registerTool(name, { description: `Asks the client (${name})`, inputSchema }, (args, ctx) => {
    const response = ctx.mcpReq.inputResponses?.input;
    if (response === undefined) return inputRequired({ inputRequests: { input: request(args) } });
    return text(describe(response));
  });
}

function registerInputTools(server: McpServer): void {
  askingTool(
    server,
    'test_sampling',
    z.object({ prompt: z.string() }),
    ({ prompt = '' }) =>
      inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 }),
    (response) => `LLM response: ${JSON.stringify((response as { content?: unknown }).content)}`,
  );
  askingTool(
    server,
    'test_elicitation',
    z.object({ message: z.string() }),
    ({ message = '' }) =>
      inputRequired.elicit({
        message,
        requestedSchema: {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
      }),
    (response) => `User response: ${JSON.stringify(response)}`,
  );
  askingTool(
    server,
    'test_elicitation_sep1034_defaults',
    z.object({}),
    () => inputRequired.elicit({ message: 'Defaults for every primitive type', requestedSchema: DEFAULTS_SCHEMA }),
    (response) => `Elicitation completed: ${JSON.stringify(response)}`,
  );
  askingTool(
    server,
    'test_elicitation_sep1330_enums',
    z.object({}),
    () => inputRequired.elicit({ message: 'Every enum variant', requestedSchema: ENUMS_SCHEMA }),
    (response) => `Elicitation completed: ${JSON.stringify(response)}`,
  );
  askingTool(
    server,
    'test_list_roots',
    z.object({}),
    () => inputRequired.listRoots(),
    (response) => {
      const view = inputResponse({ input: response } as Record<string, unknown>, 'input');
      return view.kind === 'roots' ? `roots: ${view.roots.map((root) => root.uri).join(' ')}` : `no roots: ${JSON.stringify(response)}`;
    },
  );
}

const DEFAULTS_SCHEMA: RequestedSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', default: 'John Doe' },
    age: { type: 'integer', default: 30 },
    score: { type: 'number', default: 95.5 },
    status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', default: true },
  },
};

const ENUMS_SCHEMA: RequestedSchema = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
      ],
    },
    legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
    untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
        ],
      },
    },
  },
};

function registerResources(server: McpServer): void {
  server.registerResource('static-text', 'test://static-text', { description: 'A text resource', mimeType: 'text/plain' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
  }));
  server.registerResource('static-binary', 'test://static-binary', { description: 'A binary resource', mimeType: 'image/png' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }],
  }));
  server.registerResource('watched-resource', 'test://watched-resource', { description: 'A resource to watch' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'watched' }],
  }));
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'Data for an id', mimeType: 'application/json' },
    (uri, { id }) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${String(id)}` }),
        },
      ],
    }),
  );
}

function registerPrompts(server: McpServer): void {
  server.registerPrompt('test_simple_prompt', { description: 'A simple prompt' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two arguments',
      argsSchema: z.object({
        arg1: completable(z.string(), (value) => ['paris', 'park', 'party'].filter((word) => word.startsWith(value))),
        arg2: z.string(),
      }),
    },
    ({ arg1, arg2 }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    { description: 'A prompt embedding a resource', argsSchema: z.object({ resourceUri: z.string() }) },
    ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );
  server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
}
