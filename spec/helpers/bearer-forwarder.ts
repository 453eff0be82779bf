/**
 * A reverse proxy on 127.0.0.1 that adds `Authorization: Bearer <secret>` to every request and
 * sends it on to one bridged MCP server's URL: for MCP clients that cannot send a header (MCP's
 * conformance suite). It records the JSON-RPC methods POSTed through it.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running forwarder. */
export interface BearerForwarder {
  /** Its URL (any path on it reaches the target). */
  readonly url: string;
  /** The `method` of each JSON-RPC message POSTed through it, in order (`response` for an answer). */
  readonly methods: string[];
  close(): Promise<void>;
}

/**
 * Starts a forwarder to `target` (a bridged server's URL) with `authorization` added.
 *
 * @remarks The `Host` header naming the forwarder itself becomes the target's (a reverse proxy
 * presents its upstream's name); any other `Host`, and every `Origin`, go on unchanged, so that the
 * target judges a DNS-rebinding attempt as it would without the forwarder.
 */
export async function startBearerForwarder(target: string, authorization: string): Promise<BearerForwarder> {
  const upstream = new URL(target);
  const methods: string[] = [];
  const server = createServer((req, res) => forward(req, res, upstream, authorization, methods));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    methods,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function forward(req: IncomingMessage, res: ServerResponse, upstream: URL, authorization: string, methods: string[]): void {
  const ownHost = `127.0.0.1:${(req.socket.address() as AddressInfo).port}`;
  const host =
    req.headers.host === ownHost || req.headers.host === ownHost.replace('127.0.0.1', 'localhost') ? upstream.host : req.headers.host;
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (req.method === 'POST') methods.push(methodOf(body));
    const out = request(upstream, { method: req.method, headers: { ...req.headers, host, authorization }, agent: false });
    out.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    out.end(body);
  });
}

function methodOf(body: Buffer): string {
  try {
    const message = JSON.parse(body.toString('utf8')) as { method?: unknown };
    return typeof message.method === 'string' ? message.method : 'response';
  } catch {
    return 'unparsable';
  }
}
