/**
 * A small ACP client for a remote agent: connects to a URL (`ws://`, `wss://`, `http://`,
 * `https://` or `tcp://`), initializes, opens a session, sends one prompt and prints what the
 * agent streams back, then closes.
 *
 * Usage: `node dist/examples/remote-client.js ws://127.0.0.1:4000/acp "hello"`. The bearer token,
 * when the server wants one, comes from `ACP_WIRE_TOKEN`.
 *
 * @packageDocumentation
 */
import { connectUrl, type JsonObject } from '../lib';

async function main(url: string | undefined, text: string): Promise<void> {
  if (url === undefined) {
    process.stderr.write('usage: remote-client URL [PROMPT]\n');
    process.exitCode = 2;
    return;
  }
  const agent = await connectUrl(url, { token: process.env.ACP_WIRE_TOKEN || undefined });
  try {
    const init = await agent.sendRequest<JsonObject>('initialize', {
      protocolVersion: 2,
      info: { name: 'remote-client', version: '1.0.0' },
    });
    process.stdout.write(`initialized: ${JSON.stringify(init)}\n`);
    const { sessionId } = await agent.sendRequest<{ sessionId: string }>('session/new', { cwd: process.cwd(), mcpServers: [] });
    const idle = new Promise<void>((resolve) => {
      agent.onNotification('session/update', ({ update }: { update: JsonObject }) => {
        const content = update.content as { text?: string } | undefined;
        if (update.sessionUpdate === 'agent_message_chunk' && content?.text) process.stdout.write(content.text);
        if (update.sessionUpdate === 'state_update' && update.state === 'idle') resolve();
      });
    });
    await agent.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
    await idle;
    process.stdout.write('\n');
  } finally {
    await agent.close();
  }
}

main(process.argv[2], process.argv[3] ?? 'hello').catch((error: unknown) => {
  process.stderr.write(`remote-client: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
