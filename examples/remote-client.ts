/**
 * A small ACP client for a remote agent: connects to a URL (`ws://`, `wss://`, `http://`,
 * `https://` or `tcp://`), initializes, opens a session, sends one prompt and prints what the
 * agent streams back, then closes.
 *
 * Usage: `node dist/examples/remote-client.js [--reconnect] [--work-ms MS] ws://127.0.0.1:4000/acp "hello"`.
 * `--reconnect` resumes a dropped connection by itself (when the server offers it, as
 * `acp-wire serve --resume` does) and says so on stderr; `--work-ms` asks the conformance agent to
 * spread its answer over that many milliseconds. The bearer token, when the server wants one,
 * comes from `ACP_WIRE_TOKEN`.
 *
 * @packageDocumentation
 */
import { parseArgs } from 'node:util';
import { connectUrl, type JsonObject, type ReconnectOptions } from '../lib';

const RECONNECT: ReconnectOptions = {
  attempts: 20,
  onReconnecting: ({ attempt, delayMs, error }) =>
    process.stderr.write(`\n[reconnecting: attempt ${attempt} in ${delayMs} ms (${error.message})]\n`),
  onResumed: ({ attempts, resent }) => process.stderr.write(`[resumed after ${attempts} attempt(s), ${resent} message(s) sent again]\n`),
};

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { reconnect: { type: 'boolean' }, 'work-ms': { type: 'string' } },
  });
  const [url, text = 'hello'] = positionals;
  if (url === undefined) {
    process.stderr.write('usage: remote-client [--reconnect] [--work-ms MS] URL [PROMPT]\n');
    process.exitCode = 2;
    return;
  }
  const reconnect = values.reconnect ? RECONNECT : undefined;
  const agent = await connectUrl(url, { token: process.env.ACP_WIRE_TOKEN || undefined, reconnect });
  try {
    const init = await agent.sendRequest<JsonObject>('initialize', {
      protocolVersion: 2,
      info: { name: 'remote-client', version: '1.0.0' },
    });
    process.stdout.write(`initialized: ${JSON.stringify(init)}\n`);
    const { sessionId } = await agent.sendRequest<{ sessionId: string }>('session/new', { cwd: process.cwd(), mcpServers: [] });
    const idle = new Promise<string>((resolve, reject) => {
      agent.once('close', (reason, error) => reject(error ?? new Error(`connection closed (${reason}) before the turn ended`)));
      agent.onNotification('session/update', ({ update }: { update: JsonObject }) => {
        const content = update.content as { text?: string } | undefined;
        if (update.sessionUpdate === 'agent_message_chunk' && content?.text) process.stdout.write(content.text);
        if (update.sessionUpdate === 'state_update' && update.state === 'idle') resolve(String(update.stopReason));
      });
    });
    const workMs = values['work-ms'] === undefined ? undefined : Number(values['work-ms']);
    await agent.sendRequest('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text }],
      _meta: workMs === undefined ? undefined : { workMs },
    });
    const stopReason = await idle;
    process.stdout.write(`\nstop reason: ${stopReason}\n`);
  } finally {
    await agent.close();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`remote-client: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
