/**
 * An in-process chain for MCP-over-ACP specs: the SDK's client ⇄ Conductor ⇄ two ProxyComponents
 * ⇄ the SDK's agent, with the lines of every hop readable.
 */
import * as acp from '@agentclientprotocol/sdk/unstable';
import { Conductor, ProxyComponent } from '../../lib';
import { McpProvider } from '../../lib/mcp';
import type { LineReader } from './lines';
import { sdkHop, type SdkHop } from './mcp-sdk';
import { tappedPair, type TappedPair } from './peers';

/** The chain, from the client to the agent. */
export interface McpChain {
  readonly conductor: Conductor;
  readonly clientHop: SdkHop;
  /** Conductor (left) ⇄ the first proxy (right), which serves `proxyProvider`'s servers. */
  readonly proxy1Hop: TappedPair;
  /** Conductor (left) ⇄ the second proxy (right): a passthrough. */
  readonly proxy2Hop: TappedPair;
  readonly agentHop: SdkHop;
  readonly proxy1: ProxyComponent;
  readonly proxy2: ProxyComponent;
  readonly proxyProvider: McpProvider;
  readonly sdkProvider: acp.McpOverAcpProvider;
  readonly caller: acp.McpOverAcpCaller;
  readonly client: acp.ClientConnection;
  readonly agent: acp.AgentConnection;
  /**
   * The readers of the lines an `mcp/message` request crosses from the agent to the client, in
   * order: agent → conductor, conductor → proxy2, proxy2 → conductor, conductor → proxy1, proxy1 →
   * conductor, conductor → client.
   */
  readonly towardClient: readonly LineReader[];
  /** Sends `initialize` through the chain (the proxies refuse requests before it). */
  initialize(): Promise<unknown>;
  close(): Promise<void>;
}

/** Options of {@link mcpChain}. */
export interface McpChainOptions {
  /** Adds handlers to the SDK's agent app before it connects (`session/new`, …); `caller` is the chain's. */
  readonly configureAgent?: (app: acp.AgentApp, caller: acp.McpOverAcpCaller) => acp.AgentApp;
}

/** Builds an {@link McpChain}; nothing is initialized yet. */
export function mcpChain(options: McpChainOptions = {}): McpChain {
  const clientHop = sdkHop();
  const proxy1Hop = tappedPair();
  const proxy2Hop = tappedPair();
  const agentHop = sdkHop();
  const conductor = new Conductor({
    client: clientHop.connection,
    components: [{ connection: proxy1Hop.left }, { connection: proxy2Hop.left }, { connection: agentHop.connection }],
  });
  const proxy1 = new ProxyComponent(proxy1Hop.right);
  const proxy2 = new ProxyComponent(proxy2Hop.right);
  const proxyProvider = new McpProvider();
  proxy1.serveMcp(proxyProvider);
  const sdkProvider = new acp.McpOverAcpProvider();
  const client = acp
    .client({ name: 'sdk-client' })
    .onRequest(acp.methods.client.mcp.message, sdkProvider.handleRequest)
    .connect(clientHop.stream);
  const caller = new acp.McpOverAcpCaller({ clientInfo: { name: 'sdk-agent', version: '1.0.0' } });
  const app = acp
    .agent({ name: 'sdk-agent' })
    .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {}, authMethods: [] }))
    .onNotification(acp.methods.agent.mcp.message, caller.handleNotification);
  const agent = (options.configureAgent?.(app, caller) ?? app).connect(agentHop.stream);
  return {
    conductor,
    clientHop,
    proxy1Hop,
    proxy2Hop,
    agentHop,
    proxy1,
    proxy2,
    proxyProvider,
    sdkProvider,
    caller,
    client,
    agent,
    towardClient: [agentHop.fromSdk, proxy2Hop.fromLeft, proxy2Hop.fromRight, proxy1Hop.fromLeft, proxy1Hop.fromRight, clientHop.fromWire],
    initialize: () =>
      client.agent.request(acp.methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: {},
        clientInfo: { name: 'sdk-client', version: '1' },
      }),
    close: async () => {
      await conductor.close();
      await Promise.all([proxy1Hop.close(), proxy2Hop.close(), client.closed, agent.closed]);
    },
  };
}
