/**
 * An agent module: `acp-wire serve --agent-module dist/examples/module-agent.js` makes one
 * instance of this echo agent per client connection, in serve's own process (no process per
 * client). Run directly (`node dist/examples/module-agent.js`), it is one agent on its own stdio.
 *
 * @packageDocumentation
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AcpAgent, connectStdio, type Connection } from '../lib';
import type { AgentFactory } from '../lib/hosting';

/**
 * One echo agent over `connection`. Its state (how many turns it ran) is its own: the clients of
 * a server share this module, not the instance.
 */
function echoAgent(connection: Connection): AcpAgent {
  let turns = 0;
  return new AcpAgent(connection, {
    info: { name: 'module-agent', version: '1.0.0' },
    // `turn.signal` aborts when the client cancels the turn or leaves: the sleep then throws.
    async prompt(turn) {
      turns += 1;
      const text = turn.prompt.map((block) => (block.type === 'text' ? block.text : '')).join(' ');
      for (const word of `Turn ${turns}, you said: ${text}`.split(' ')) {
        turn.sendText(`${word} `);
        await sleep(20, undefined, { signal: turn.signal });
      }
      return 'end_turn';
    },
  });
}

/** What `acp-wire serve --agent-module` calls for each client connection. */
export const createAgent: AgentFactory = (connection) => echoAgent(connection);

if (require.main === module) echoAgent(connectStdio({ name: 'module-agent' }));
