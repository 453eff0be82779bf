/**
 * The Streamable HTTP side of the remote server, as the official ACP SDK implements the draft:
 * `POST` carries each client message (the `initialize` POST opens a connection and gets its
 * answer and `Acp-Connection-Id`), `GET` opens an event stream for the agent's messages (the
 * connection's, or with `Acp-Session-Id` a session's), `DELETE` ends the connection.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  EVENT_STREAM_CONTENT_TYPE,
  HEADER_CLIENT_SEQ,
  HEADER_EVENTS_RECEIVED,
  HEADER_HEARTBEAT,
  HEADER_LAST_EVENT_ID,
  HEADER_SESSION_ID,
  isSessionScoped,
} from './http-protocol';
import {
  HttpServerCore,
  header,
  json,
  readPostedMessage,
  text,
  type HttpStreamServerOptions,
  type HttpStreamSink,
} from './http-server-core';
import type { HttpServerStream } from './http-server-stream';
import { HEADER_CONNECTION_ID } from '../remote-connection';
import { advertiseResumable, resumeSettings, type ResumeSettings } from '../resume/resume-options';
import { isRequest, sessionIdOf, type RoutedMessage } from '../routed-message';

/**
 * Answers Streamable HTTP requests that passed the path, origin and token checks, the connection
 * named by `Acp-Connection-Id` (the SDK's dialect).
 *
 * @internal
 */
export class HttpStreamServer extends HttpServerCore {
  readonly #resume: ResumeSettings | undefined;

  /** @param admit - whether a new connection may open now (else its `initialize` POST is refused 503) */
  constructor(options: HttpStreamServerOptions, onStream: HttpStreamSink, admit?: (request: IncomingMessage) => boolean) {
    super(options, onStream, admit);
    this.#resume = resumeSettings(options.resume);
  }

  protected post(request: IncomingMessage, response: ServerResponse): void {
    const stream = this.streams.get(header(request, HEADER_CONNECTION_ID) ?? '');
    const heartbeat = header(request, HEADER_HEARTBEAT);
    if (heartbeat !== undefined) return heartbeatPost(request, response, stream, heartbeat);
    stream?.heard(undefined);
    // A POST in progress keeps its connection from being idle.
    const release = stream?.hold();
    void this.#post(request, response)
      .catch(() => response.destroy())
      .finally(release);
  }

  async #post(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const posted = await readPostedMessage(request, response, this.options.maxPayload);
    if (posted === undefined) return;
    const { message, body } = posted;
    const connectionId = header(request, HEADER_CONNECTION_ID);
    if (isRequest(message) && message.method === 'initialize') {
      if (connectionId !== undefined) return text(response, 400, 'Initialize not allowed on existing connection');
      if (this.refuseInitialize(request, response, message)) return;
      return this.#open(request, response, message, body);
    }
    if (connectionId === undefined) return text(response, 400, 'Missing Acp-Connection-Id');
    const stream = this.streams.get(connectionId);
    if (!stream) return text(response, 404, 'Unknown Acp-Connection-Id');
    if (typeof message.method === 'string') {
      const headerSession = header(request, HEADER_SESSION_ID);
      const paramsSession = sessionIdOf(message);
      if ((isSessionScoped(message.method) || paramsSession !== undefined) && headerSession === undefined) {
        return text(response, 400, 'Missing Acp-Session-Id');
      }
      if (headerSession !== undefined && paramsSession !== undefined && headerSession !== paramsSession) {
        return text(response, 400, 'Mismatched Acp-Session-Id');
      }
      // `session/load` replays the session's history: its answer comes on the connection's stream.
      if (!stream.takeSeq(seqOf(request))) return void response.writeHead(202).end();
      stream.release(headerSession, header(request, HEADER_EVENTS_RECEIVED));
      if (isRequest(message)) stream.routeAnswer(message.id, message.method === 'session/load' ? null : (headerSession ?? null));
    } else if (!stream.takeSeq(seqOf(request))) return void response.writeHead(202).end();
    else stream.release(header(request, HEADER_SESSION_ID), header(request, HEADER_EVENTS_RECEIVED));
    await stream.accept(body);
    response.writeHead(202).end();
  }

  async #open(request: IncomingMessage, response: ServerResponse, message: RoutedMessage, body: Buffer): Promise<void> {
    const connectionId = randomUUID();
    let answer!: Promise<string | undefined>;
    // A client that gives up on its initialize leaves nothing behind.
    let onGiveUp = (): void => {};
    const stream = await this.open(request, connectionId, { ...this.options, resume: this.#resume }, body, (opened) => {
      answer = opened.expectInitialize(message.id);
      onGiveUp = () => opened.closeGoingAway();
      response.once('close', onGiveUp);
    });
    let line = await answer;
    response.removeListener('close', onGiveUp);
    if (line !== undefined && this.#resume) line = advertiseResumable(line, this.#resume);
    if (line === undefined) {
      this.forget(connectionId, stream);
      const failed = {
        jsonrpc: '2.0',
        id: message.id,
        error: { code: -32603, message: 'Initialize failed', data: 'the connection closed before answering' },
      };
      return json(response, 500, JSON.stringify(failed));
    }
    response.setHeader(HEADER_CONNECTION_ID, connectionId);
    json(response, 200, line);
  }

  protected get(request: IncomingMessage, response: ServerResponse): void {
    if (!(request.headers.accept ?? '').toLowerCase().includes(EVENT_STREAM_CONTENT_TYPE)) return text(response, 406, 'Not Acceptable');
    const connectionId = header(request, HEADER_CONNECTION_ID);
    if (connectionId === undefined) return text(response, 400, 'Missing Acp-Connection-Id');
    const stream = this.streams.get(connectionId);
    // A resume of a connection the server no longer has is refused as a conflict, never a fresh stream.
    const lastEventId = this.#resume ? header(request, HEADER_LAST_EVENT_ID) : undefined;
    if (!stream && lastEventId !== undefined) return text(response, 409, 'Unknown Acp-Connection-Id: resume at the protocol level');
    if (!stream) return text(response, 404, 'Unknown Acp-Connection-Id');
    stream.heard(heartbeatMsOf(header(request, HEADER_HEARTBEAT)));
    const outcome = stream.attach(response, header(request, HEADER_SESSION_ID), lastEventId);
    if (outcome === 'busy') text(response, 409, 'Outbound stream already has an active receiver');
    else if (outcome === 'gone') text(response, 409, `Last-Event-ID ${lastEventId} is no longer held: resume at the protocol level`);
  }

  protected delete(request: IncomingMessage, response: ServerResponse): void {
    const connectionId = header(request, HEADER_CONNECTION_ID);
    if (connectionId === undefined) return text(response, 400, 'Missing Acp-Connection-Id');
    this.deleteConnection(response, connectionId, 'Unknown Acp-Connection-Id');
  }
}

/**
 * Answers a client's heartbeat (an empty `POST` with `Acp-Heartbeat`): 204 once noted by its
 * connection (which also takes its `Acp-Events-Received`), 404 for a connection the server does
 * not have. Its body, if any, is read and ignored.
 */
function heartbeatPost(request: IncomingMessage, response: ServerResponse, stream: HttpServerStream | undefined, heartbeat: string): void {
  request.resume();
  if (!stream) return text(response, 404, 'Unknown Acp-Connection-Id');
  stream.heard(heartbeatMsOf(heartbeat));
  stream.release(header(request, HEADER_SESSION_ID), header(request, HEADER_EVENTS_RECEIVED));
  response.writeHead(204).end();
}

/** The shortest and longest heartbeat interval a client may name, in milliseconds. */
const MIN_HEARTBEAT_MS = 50;
const MAX_HEARTBEAT_MS = 3_600_000;

/** The interval an `Acp-Heartbeat` header names, when it is a whole number of milliseconds within bounds. */
function heartbeatMsOf(value: string | undefined): number | undefined {
  if (value === undefined || !/^[1-9][0-9]{0,6}$/.test(value)) return undefined;
  const ms = Number(value);
  return ms >= MIN_HEARTBEAT_MS && ms <= MAX_HEARTBEAT_MS ? ms : undefined;
}

/** The `Acp-Client-Seq` of a POST, when it is a positive integer (of at most 15 digits, no leading zero). */
function seqOf(request: IncomingMessage): number | undefined {
  const value = header(request, HEADER_CLIENT_SEQ);
  if (value === undefined || value.length === 0 || value.length > 15 || value.charCodeAt(0) === 0x30) return undefined;
  let seq = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    seq = seq * 10 + digit;
  }
  return seq;
}
