/**
 * A minimal MCP 2026-07-28 Streamable HTTP client for specs: one POST per request (no
 * `initialize`, no session), with the headers a stateless endpoint checks, on a socket of its own
 * (`agent: false`) so nothing is pooled past the exchange.
 */
import { type ClientRequest, request as httpRequest } from 'node:http';

/** The MCP revision the requests carry, in `MCP-Protocol-Version` and in `params._meta`. */
export const MCP_REVISION = '2026-07-28';

/** Where to send: an `http` MCP server declaration's `url` and `headers`. */
export interface McpHttpEndpoint {
  readonly url: string;
  readonly headers: readonly { name: string; value: string }[];
}

/** An HTTP answer: its status, content type and the JSON-RPC messages of its body (one, or the SSE events). */
export interface McpHttpAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly messages: unknown[];
}

/** A request in flight: its answer, and the request itself (to abort it). */
export interface McpHttpExchange {
  readonly answer: Promise<McpHttpAnswer>;
  readonly request: ClientRequest;
}

/** The JSON-RPC messages of a body: the JSON, or the `data:` of each SSE event. */
function messagesOf(contentType: string, body: string): unknown[] {
  if (!contentType.startsWith('text/event-stream')) return [JSON.parse(body)];
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)));
}

/**
 * POSTs one MCP request (`id`, `method`, `params` with the revision's `_meta` added) to `endpoint`,
 * with `MCP-Protocol-Version`, `Mcp-Method` and, for `tools/call`, `Mcp-Name`.
 */
export function postMcp(endpoint: McpHttpEndpoint, id: number, method: string, params: Record<string, unknown> = {}): McpHttpExchange {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: { 'io.modelcontextprotocol/protocolVersion': MCP_REVISION, 'io.modelcontextprotocol/clientCapabilities': {} },
    },
  });
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': MCP_REVISION,
    'mcp-method': method,
  };
  if (typeof params.name === 'string') headers['mcp-name'] = params.name;
  for (const { name, value } of endpoint.headers) headers[name.toLowerCase()] = value;
  const request = httpRequest(endpoint.url, { method: 'POST', headers, agent: false });
  const answer = new Promise<McpHttpAnswer>((resolve, reject) => {
    request.once('error', reject);
    request.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', reject);
      response.once('end', () => {
        const contentType = response.headers['content-type'] ?? '';
        const status = response.statusCode ?? 0;
        resolve({ status, contentType, messages: messagesOf(contentType, Buffer.concat(chunks).toString('utf8')) });
      });
    });
  });
  request.end(body);
  return { answer, request };
}
