/**
 * The official SDK's side of the interop specs: an SDK v2 agent served by the SDK's own
 * `AcpServer` (WebSocket and Streamable HTTP on one Node HTTP server).
 */
import * as acp from '@agentclientprotocol/sdk/experimental/v2';
import { AcpServer } from '@agentclientprotocol/sdk/experimental/server';
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from '@agentclientprotocol/sdk/experimental/node';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

/** The SDK agent's name in its `initialize` answer. */
export const SDK_AGENT_INFO = { name: 'sdk-agent', version: '1.0.0' };

/**
 * A v2 agent built with the SDK: `initialize`, `session/new` (`sdk-session-N`), `session/prompt`
 * (a `user_message` and one `agent_message_chunk` "sdk echo: <text>", then `{messageId}`;
 * `_meta.holdMs` waits first and answers `-32800` when cancelled meanwhile).
 */
export function sdkAgent(): acp.AgentApp {
  let sessions = 0;
  let messages = 0;
  return acp
    .agent({ name: SDK_AGENT_INFO.name })
    .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 2, info: SDK_AGENT_INFO, capabilities: { session: {} } }))
    .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `sdk-session-${++sessions}` }))
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal }) => {
      const holdMs = Number((params._meta as { holdMs?: number } | undefined)?.holdMs ?? 0);
      if (holdMs > 0) {
        await new Promise<void>((resolve, reject) => {
          if (signal.aborted) return reject(signal.reason as Error);
          const timer = setTimeout(resolve, holdMs);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
        });
      }
      const messageId = `sdk-message-${++messages}`;
      const text = params.prompt.map((block) => (block.type === 'text' ? block.text : '')).join('');
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: 'user_message', messageId, content: params.prompt },
      });
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: {
          sessionUpdate: 'agent_message_chunk',
          messageId: `${messageId}-reply`,
          content: { type: 'text', text: `sdk echo: ${text}` },
        },
      });
      return { messageId };
    });
}

/** The SDK's `AcpServer` hosting {@link sdkAgent} on 127.0.0.1 (WebSocket and Streamable HTTP, any path). */
export interface SdkServer {
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

/** Starts an SDK `AcpServer` on 127.0.0.1 with a fresh {@link sdkAgent} per connection. */
export async function startSdkServer(): Promise<SdkServer> {
  const acpServer = new AcpServer({ createAgent: sdkAgent });
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer(createNodeHttpHandler(acpServer));
  server.on('upgrade', createNodeWebSocketUpgradeHandler(acpServer, wss));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    async close() {
      await acpServer.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
