/**
 * Quick start, client side: the same `AcpClient` code against an agent that speaks only ACP v1 and
 * one that speaks v2. It starts quickstart-agent as a child process and talks to it over stdio.
 * Run: `npm run build && node dist/examples/quickstart-client.js`
 */
import { join } from 'node:path';
import { AcpClient, isSessionUpdateKind, spawnConnection } from '../lib';

async function talkTo(args: string[]): Promise<void> {
  const agent = spawnConnection(process.execPath, [join(__dirname, 'quickstart-agent.js'), ...args]);
  try {
    const client = new AcpClient(agent.connection, { info: { name: 'quickstart-client', version: '1.0.0' } });
    const { protocolVersion, info } = await client.initialize(); // offers v2, accepts v1
    console.log(`${info?.name}: ACP v${protocolVersion}`);
    const { sessionId } = await client.newSession({ cwd: process.cwd() });

    // A turn: its updates as they come, then its stop reason, whichever version carries it.
    const turn = client.prompt({ sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    let text = '';
    for await (const update of turn) {
      if (isSessionUpdateKind(update, 'agent_message_chunk') && update.content.type === 'text') text += update.content.text;
    }
    console.log(`  ${text.trim()} (${(await turn).stopReason})`);

    // Cancelling a turn (session/cancel) after its first words: it ends "cancelled" in both versions.
    const long = client.prompt({ sessionId, prompt: [{ type: 'text', text: 'tell me a very long story, please' }] });
    for await (const _update of long) break;
    long.cancel();
    console.log(`  a long story: ${(await long).stopReason}`);
  } finally {
    console.log('  agent exited:', await agent.close()); // ends the agent's stdin; it exits by itself
  }
}

async function main(): Promise<void> {
  await talkTo(['--v1']);
  await talkTo([]);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
