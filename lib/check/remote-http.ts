/**
 * Raw HTTP for the remote checks: one request and its whole answer, and an event stream read
 * event by event, bounded in time, without a client library in between (so that statuses, headers
 * and bodies are seen as the server sent them).
 *
 * @packageDocumentation
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { SseParser } from '../transports/remote/http/sse';

/** A server's answer to one request. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One request: its method, headers and body. */
export interface HttpCall {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** Largest event the checks read. */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;

function send(url: URL, call: HttpCall): ReturnType<typeof httpRequest> {
  const make = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const request = make(url, { method: call.method, headers: call.headers });
  request.end(call.body);
  return request;
}

/**
 * Sends `call` to `url` and resolves with the whole answer.
 *
 * @throws Error (rejects) on a network error, or after `timeoutMs` without the whole answer
 */
export function httpCall(url: URL, call: HttpCall, timeoutMs: number): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = send(url, call);
    const timer = setTimeout(
      () => request.destroy(new Error(`no answer to ${call.method} ${url.pathname} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    request.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.once('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') });
      });
      response.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  });
}

/** An event stream being read: its status and headers, its events as they come, and how to drop it. */
export interface EventStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body when the status is not 200 (a refusal). */
  readonly body: string;
  /** Resolves once the stream has ended (by either side). */
  readonly ended: Promise<void>;
  /** Cuts the stream (its socket destroyed), as a dropped network would. */
  drop(): void;
}

/**
 * Opens an event stream (`GET`): resolves once its answer's head has come (with the whole body
 * when it is not 200); each event's data goes to `onEvent`.
 *
 * @throws Error (rejects) on a network error, or after `timeoutMs` without an answer
 */
export function openEventStream(
  url: URL,
  headers: Record<string, string>,
  timeoutMs: number,
  onEvent: (data: Buffer) => void,
): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const request = send(url, { method: 'GET', headers: { accept: 'text/event-stream', ...headers } });
    const timer = setTimeout(() => request.destroy(new Error(`no answer to GET ${url.pathname} within ${timeoutMs} ms`)), timeoutMs);
    request.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.once('response', (response: IncomingMessage) => {
      clearTimeout(timer);
      request.on('error', () => {});
      const ended = new Promise<void>((done) => response.once('close', () => done()));
      const stream = { status: response.statusCode ?? 0, headers: response.headers, ended, drop: () => void request.destroy() };
      if (stream.status !== 200) {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () => resolve({ ...stream, body: Buffer.concat(chunks).toString('utf8') }));
        return;
      }
      const parser = new SseParser(MAX_EVENT_BYTES, onEvent, () => request.destroy());
      response.on('data', (chunk: Buffer) => parser.write(chunk));
      response.once('end', () => parser.end());
      resolve({ ...stream, body: '' });
    });
  });
}
