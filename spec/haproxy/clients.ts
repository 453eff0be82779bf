/**
 * ACP v1 clients of the conformance agent through the balancer, over WebSocket or Streamable
 * HTTP: v1 because its `session/prompt` is answered at the end of the turn, which a drain waits for.
 */
import { connectHttp, connectWebSocket, type Connection, type HeartbeatOptions } from '../../lib';

/** How a client reaches the balancer. */
export type Transport = 'websocket' | 'http';

/** The ACP v1 `initialize` params of every client. */
const INIT_V1 = { protocolVersion: 1, clientInfo: { name: 'haproxy-spec-client', version: '1.0.0' }, clientCapabilities: {} };
/** The prompt: the agent streams back "echo: " and each word, one chunk each. */
const PROMPT_WORDS = ['through', 'the', 'balancer'];

/** A client with an initialized connection and one open session. */
export interface TurnClient {
  readonly transport: Transport;
  readonly connection: Connection;
  readonly sessionId: string;
  /** How many `agent_message_chunk` updates it has received. */
  readonly chunks: number;
}

/** The outcome of one turn: its stop reason and how many chunks streamed during it. */
export interface TurnOutcome {
  readonly stopReason: string;
  readonly chunks: number;
}

/** The chunks one turn streams. */
export const CHUNKS_PER_TURN = PROMPT_WORDS.length + 1;

/** Connects through the balancer, initializes (ACP v1) and opens a session. */
export async function openClient(
  urls: { wsUrl: string; httpUrl: string },
  transport: Transport,
  heartbeat?: HeartbeatOptions,
): Promise<TurnClient> {
  const connection =
    transport === 'websocket' ? await connectWebSocket(urls.wsUrl, heartbeat ? { heartbeat } : {}) : connectHttp(urls.httpUrl);
  let chunks = 0;
  connection.onNotification('session/update', (params: { update?: { sessionUpdate?: string } }) => {
    if (params.update?.sessionUpdate === 'agent_message_chunk') chunks += 1;
  });
  try {
    await connection.sendRequest('initialize', INIT_V1);
    const { sessionId } = await connection.sendRequest<{ sessionId: string }>('session/new', { cwd: '/', mcpServers: [] });
    return {
      transport,
      connection,
      sessionId,
      get chunks() {
        return chunks;
      },
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/** Runs one turn that works `workMs`; resolves at its end (v1: the prompt's answer). */
export async function runTurn(client: TurnClient, workMs: number): Promise<TurnOutcome> {
  const before = client.chunks;
  const { stopReason } = await client.connection.sendRequest<{ stopReason: string }>('session/prompt', {
    sessionId: client.sessionId,
    prompt: [{ type: 'text', text: PROMPT_WORDS.join(' ') }],
    _meta: { workMs },
  });
  return { stopReason, chunks: client.chunks - before };
}

/** Opens `count` clients, alternating WebSocket and HTTP, `batch` at a time (agents take CPU to start). */
export async function openClients(
  urls: { wsUrl: string; httpUrl: string },
  count: number,
  batch = 20,
  heartbeat?: HeartbeatOptions,
): Promise<TurnClient[]> {
  const clients: TurnClient[] = [];
  for (let start = 0; start < count; start += batch) {
    const transports = Array.from(
      { length: Math.min(batch, count - start) },
      (_, i): Transport => ((start + i) % 2 === 0 ? 'websocket' : 'http'),
    );
    const opened = await Promise.allSettled(transports.map((transport) => openClient(urls, transport, heartbeat)));
    for (const result of opened) if (result.status === 'fulfilled') clients.push(result.value);
    const failure = opened.find((result) => result.status === 'rejected');
    if (failure) {
      await closeClients(clients);
      throw (failure as PromiseRejectedResult).reason;
    }
  }
  return clients;
}

/** Closes every client (a Streamable HTTP one DELETEs its connection through the balancer). */
export async function closeClients(clients: readonly TurnClient[]): Promise<void> {
  await Promise.all(clients.map((client) => client.connection.close()));
}
