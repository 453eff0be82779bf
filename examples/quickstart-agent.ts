/**
 * Quick start, agent side: an ACP agent on its own stdin/stdout, built on `AcpAgent`. It speaks ACP
 * v1 and v2, whichever the client's `initialize` negotiates (`--v1`: only v1, like most agents
 * people run today). Started by quickstart-client. Only protocol lines go to stdout; log to stderr.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AcpAgent, connectStdio } from '../lib';

new AcpAgent(connectStdio({ name: 'quickstart-agent' }), {
  info: { name: 'quickstart-agent', version: '1.0.0' },
  protocolVersions: process.argv.includes('--v1') ? [1] : [1, 2],
  // Sessions live in memory (the default `sessions` store), so this agent serves the whole ACP v2
  // session baseline as it is: session/new, list, resume (with replay), close, prompt, cancel.
  // One turn: stream the answer word by word. `turn.signal` aborts when the client cancels the
  // turn; the sleep then throws, and the turn ends "cancelled".
  async prompt(turn) {
    const text = turn.prompt.map((block) => (block.type === 'text' ? block.text : '')).join(' ');
    for (const word of `You said: ${text}`.split(' ')) {
      turn.sendText(`${word} `);
      await sleep(text.length * 10, undefined, { signal: turn.signal });
    }
    return 'end_turn';
  },
});
