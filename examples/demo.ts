/**
 * The acp-wire demo (`npm run demo`): a client drives the conformance agent through the conductor
 * and the passthrough proxy, every hop over stdio, and shows, step by step, what
 * goes over the wire: initialize, a streamed prompt, a cancelled request, a dropped responder
 * answered by the library, a turn stopped with `session/cancel`, and a tool a proxy gives the agent
 * (MCP-over-ACP). Ends by itself, exit 0.
 *
 * @packageDocumentation
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  AcpClient,
  RpcError,
  negotiatedVersion,
  spawnConnection,
  type ChildConnection,
  type JsonObject,
  type SessionUpdateParams,
} from '../lib';

const AGENT = 'dist/examples/conformance-agent.js';
const PROXY = 'dist/examples/passthrough-proxy.js';
const CONDUCTOR = 'dist/bin/acp-wire.js';
const TOOL_PROXY = 'dist/examples/tool-proxy.js';
const TOOL_AGENT = 'dist/examples/tool-agent.js';

/** How long the whole demo may take before it gives up (it normally takes about two seconds). */
const WATCHDOG_MS = 30_000;

const say = (line = ''): void => void process.stdout.write(`${line}\n`);

/** The repository root: the nearest folder upwards whose package.json is acp-wire's. */
function findRoot(): string {
  for (let dir = __dirname; dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'acp-wire') return dir;
  }
  throw new Error('cannot find the acp-wire package root');
}

/** Starts the chain: the conductor, running the passthrough proxy and the agent, each over stdio. */
function startChain(root: string): ChildConnection {
  say('chain: client → acp-wire conduct → passthrough-proxy → conformance-agent (each hop over stdio)');
  say(`       node ${CONDUCTOR} conduct "node ${PROXY}" "node ${AGENT}"`);
  return spawnConnection(process.execPath, [CONDUCTOR, 'conduct', `node ${PROXY}`, `node ${AGENT}`], { cwd: root });
}

const short = (id: unknown): string => (typeof id === 'string' ? `${id.slice(0, 8)}…` : JSON.stringify(id));

function describeUpdate({ update }: SessionUpdateParams): string {
  switch (update.sessionUpdate) {
    case 'user_message':
      return `user_message ${short(update.messageId)}`;
    case 'agent_message_chunk':
      return `agent_message_chunk ${JSON.stringify((update.content as JsonObject).text)}`;
    case 'state_update':
      return update.state === 'idle' ? `state idle (${String(update.stopReason)})` : `state ${String(update.state)}`;
    default:
      return update.sessionUpdate;
  }
}

function describeError(error: unknown): string {
  if (!(error instanceof RpcError)) return String(error);
  return `error ${error.code} ${error.message}${error.data === undefined ? '' : `: ${String(error.data)}`}`;
}

/** Prints every update of `sessionId`; `until(kind)` resolves at the next update of that kind. */
function watchSession(client: AcpClient, sessionId: string): { until(test: (params: SessionUpdateParams) => boolean): Promise<void> } {
  let waiter: { test: (params: SessionUpdateParams) => boolean; resolve: () => void } | undefined;
  const show = (params: SessionUpdateParams): void => {
    say(`     ↳ ${describeUpdate(params)}`);
    if (waiter?.test(params)) {
      waiter.resolve();
      waiter = undefined;
    }
  };
  // The lines of one chunk are dispatched at once, while an awaited answer resumes a few
  // microtasks later: showing updates a macrotask later keeps the printed order the wire order
  // (the agent answers a prompt before it streams the turn).
  client.onSessionUpdate((params) => void setImmediate(show, params), { sessionId });
  return { until: (test) => new Promise((resolve) => (waiter = { test, resolve })) };
}

const isIdle = ({ update }: SessionUpdateParams): boolean => update.sessionUpdate === 'state_update' && update.state === 'idle';

async function run(client: AcpClient): Promise<void> {
  say('\n1. initialize: the client offers ACP v2 and accepts v1');
  say('   → initialize {protocolVersion: 2}');
  const agent = await client.initialize({ info: { name: 'acp-wire-demo', version: '1.0.0' } });
  say(`   ← ${String(agent.info?.name)} ${String(agent.info?.version)}, protocol ${agent.protocolVersion}`);
  say(`   negotiated ACP v${String(negotiatedVersion(client.connection))} (acp-wire conduct --trace logs the version of every hop)`);

  say('\n2. a prompt, its answer, and the turn streamed as session/update');
  const { sessionId } = await client.newSession({ cwd: process.cwd() });
  say(`   → session/new  ← session ${short(sessionId)}`);
  const session = watchSession(client, sessionId);
  say('   → session/prompt "hello, acp-wire"');
  const idle = session.until(isIdle);
  const turn = client.prompt({ sessionId, prompt: [{ type: 'text', text: 'hello, acp-wire' }] });
  const answer = await turn.request;
  say(`   ← {messageId: ${short('messageId' in answer ? answer.messageId : undefined)}}  (answered as soon as the prompt is inserted)`);
  await idle;
  say(`   the turn ended: ${(await turn).stopReason}`);

  say('\n3. cancelling one request: $/cancel_request');
  const sleep = client.connection.sendRequest('_test/sleep', { ms: 60_000 });
  say(`   → _test/sleep {ms: 60000}  (id ${JSON.stringify(sleep.id)})`);
  sleep.cancel();
  say(`   → $/cancel_request {requestId: ${JSON.stringify(sleep.id)}}`);
  say(`   ← ${await sleep.then(() => 'a result?!', describeError)}`);

  say('\n4. a handler that lets go of its responder without answering');
  say('   → _test/drop');
  const started = Date.now();
  const dropped = await client.connection.sendRequest('_test/drop').then(() => 'a result?!', describeError);
  say(`   ← ${dropped}`);
  say(`     (sent by the library once the agent's garbage collector noticed, after ${((Date.now() - started) / 1000).toFixed(1)} s)`);

  say('\n5. stopping a turn: session/cancel (a notification, not a request cancel)');
  say('   → session/prompt "a long answer" (the agent works 60 s)');
  const firstChunk = session.until(({ update }) => update.sessionUpdate === 'agent_message_chunk');
  const long = client.prompt({ sessionId, prompt: [{ type: 'text', text: 'a long answer' }], _meta: { workMs: 60_000 } });
  const longAnswer = await long.request;
  say(`   ← {messageId: ${short('messageId' in longAnswer ? longAnswer.messageId : undefined)}}`);
  await firstChunk;
  const cancelled = session.until(isIdle);
  say('   → session/cancel');
  long.cancel();
  await cancelled;
  say(`   the turn ended: ${(await long).stopReason}`);
}

/** The same client code against an agent that speaks ACP v1 (here: the conformance agent, offered v1). */
async function runV1(root: string): Promise<void> {
  say('\n6. the same client code with an ACP v1 agent (the conformance agent, offered v1 directly)');
  const agent = spawnConnection(process.execPath, [AGENT], { cwd: root });
  try {
    const client = new AcpClient(agent.connection, { protocolVersions: [1] });
    say('   → initialize {protocolVersion: 1}');
    const { protocolVersion } = await client.initialize();
    say(`   ← protocol ${protocolVersion}: negotiated ACP v${String(client.protocolVersion)}`);
    const { sessionId } = await client.newSession({ cwd: process.cwd() });
    say('   → session/prompt "hello, v1"');
    const turn = client.prompt({ sessionId, prompt: [{ type: 'text', text: 'hello, v1' }] });
    for await (const update of turn) say(`     ↳ ${describeUpdate({ sessionId, update } as SessionUpdateParams)}`);
    const result = await turn;
    say(`   ← {stopReason: ${result.stopReason}}  (v1 answers the prompt at the end of the turn)`);
  } finally {
    await agent.close();
  }
}

/** A proxy gives the agent a tool: the agent's MCP call travels back through the chain to it. */
async function runTool(root: string): Promise<void> {
  say('\n7. a tool from the chain (MCP-over-ACP): the proxy provides an MCP server, the agent calls it');
  say('   chain: client → acp-wire conduct → tool-proxy (word_count) → tool-agent');
  const chain = spawnConnection(process.execPath, [CONDUCTOR, 'conduct', `node ${TOOL_PROXY}`, `node ${TOOL_AGENT}`], { cwd: root });
  try {
    const client = new AcpClient(chain.connection);
    await client.initialize();
    const { sessionId } = await client.newSession({ cwd: process.cwd() });
    say('   → session/new {mcpServers: []}  (the proxy adds {type: "acp", name: "word-tools", serverId})');
    say('   → session/prompt "count these five words please"');
    say('     (the agent sends mcp/message tools/call back up the chain; the proxy answers it)');
    const turn = client.prompt({ sessionId, prompt: [{ type: 'text', text: 'count these five words please' }] });
    for await (const update of turn)
      if (update.sessionUpdate === 'agent_message_chunk') say(`     ↳ ${describeUpdate({ sessionId, update } as SessionUpdateParams)}`);
    say(`   the turn ended: ${(await turn).stopReason}`);
  } finally {
    await chain.close();
  }
}

async function main(): Promise<void> {
  const root = findRoot();
  say('acp-wire demo');
  const chain = startChain(root);
  const watchdog = setTimeout(() => {
    say('\nthe demo took too long; giving up');
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  try {
    await run(new AcpClient(chain.connection));
  } finally {
    const exit = await chain.close();
    say(`chain closed (exit code ${String(exit.code)})`);
  }
  try {
    await runV1(root);
    await runTool(root);
    say('\ndone: every request got exactly one answer.');
  } finally {
    clearTimeout(watchdog);
  }
}

// Piped into `head`, stdout may close early: stop quietly (the chain ends with our stdio).
process.stdout.on('error', () => process.exit(0));

main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
