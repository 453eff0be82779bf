import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
export const HEADER_CONNECTION_ID = 'Acp-Connection-Id';
export interface HttpServerLimits {}
export class HttpStreamServer {
  constructor(_options: object, _onStream: (stream: Duplex, info: any) => void) {}
  handle(_request: IncomingMessage, response: ServerResponse): void { response.writeHead(501).end(); }
  close(): void {}
}
