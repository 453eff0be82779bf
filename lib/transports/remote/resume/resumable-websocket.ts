/**
 * The server side of a resumable WebSocket connection: one byte stream of NDJSON lines that
 * outlives the sockets it runs over. Each agent message gets a cursor and is held in a replay
 * buffer; a socket that drops leaves the connection waiting for its client for a grace period; a
 * new socket whose first frame is `stream/resume` takes the connection over and gets what it
 * missed.
 *
 * @packageDocumentation
 */
import { decimalText } from '../../../framing/json-text';
import { MESSAGE_PORT } from '../../../framing/message-port';
import { idKey, isRequest, isResponse, parseRouted } from '../routed-message';
import { ReplayBuffer } from './replay-buffer';
import { advertiseResumable, type ResumeSettings } from './resume-options';
import { AckSchedule, readCursorAck, receivedAckText } from './stream-ack';
import {
  STREAM_ACK_METHOD,
  STREAM_RESUMED_METHOD,
  STREAM_RESUME_FAILED_METHOD,
  STREAM_RESUME_METHOD,
  controlMessage,
  controlOf,
  isControlCandidate,
} from './control-messages';
import { CURSOR_META_KEY, stampCursor } from './stream-cursor';
import { sendFrames, SocketHoppingStream, type FrameSocket } from './socket-hopping-stream';

/**
 * One resumable WebSocket connection on the server, as a byte stream of NDJSON lines.
 *
 * @remarks Ends (its readable side) when the client closes its socket normally, when
 * {@link ResumableServerStream.closeGoingAway} is called, or when no socket has resumed it within
 * `graceMs` of a drop. A socket dropping cancels nothing: the lines written meanwhile wait in the
 * replay buffer (the oldest dropped past its bounds, which makes a later resume fail rather than
 * skip them).
 * @internal
 */
export class ResumableServerStream extends SocketHoppingStream {
  readonly connectionId: string;
  readonly #settings: ResumeSettings;
  readonly #buffer: ReplayBuffer;
  #received = 0;
  /** When the client's messages are acknowledged (so that it forgets them). */
  readonly #ack = new AckSchedule();
  /** The cursor of the next agent message (taken when it is stamped, or earlier by its writer). */
  #nextCursor = 1;
  #grace: NodeJS.Timeout | undefined;
  #initializeKey: string | undefined;
  #isAdvertised = false;
  #isClosing = false;
  /** Its socket (and the next one, when it comes back to collect the rest) closes 1001. */
  #isGoingAway = false;

  constructor(connectionId: string, settings: ResumeSettings) {
    super();
    this.connectionId = connectionId;
    this.#settings = settings;
    this.#buffer = new ReplayBuffer({ maxMessages: settings.bufferMessages, maxAgeMs: settings.bufferMs });
    // A connection that owns this stream writes each message's cursor as it serializes it.
    this[MESSAGE_PORT].metaStamp = {
      takeEntry: () => `"${CURSOR_META_KEY}":"${decimalText(this.#nextCursor++)}"`,
      stamp: (text) => stampCursor(text, this.#nextCursor++),
    };
  }

  /** Runs the connection over its first socket. */
  start(socket: FrameSocket): void {
    this.#attach(socket);
  }

  /**
   * Takes a frame read from the socket before this stream existed (the first one). Called once
   * the stream's owner has it: a connection then takes it, as every later one, as a frame rather
   * than as a line pushed before it could switch to frames.
   */
  receive(frame: Buffer): void {
    this.#onFrame(frame);
  }

  /**
   * Moves the connection onto `socket` (whose first frame asked to resume after `cursor`), replays
   * what the client missed and goes on live.
   *
   * @returns the reason the resume is refused, or `undefined` once resumed
   */
  resumeOn(socket: FrameSocket, cursor: string | null): string | undefined {
    if (this.destroyed || this.readableEnded || (this.#isClosing && !this.isAwaitingResume)) return 'the connection has ended';
    const missed = this.#buffer.since(cursor);
    if (missed === undefined) return `cursor ${String(cursor)} is no longer held (or was never sent)`;
    const previous = this.socket;
    this.socket = undefined;
    previous?.destroy();
    clearTimeout(this.#grace);
    this.#grace = undefined;
    this.#attach(socket);
    sendFrames(socket, [controlMessage(STREAM_RESUMED_METHOD, { received: this.#received }), ...missed.map((entry) => entry.text)]);
    // Closed while its client was away: it came back for the rest, which it now has.
    if (this.#isClosing) socket.end();
    return undefined;
  }

  /**
   * Whether its socket dropped and the grace period for a resume is running: its owner, done with
   * it, should end it rather than destroy it, so that its client can still collect what it missed.
   */
  get isAwaitingResume(): boolean {
    return this.socket === undefined && this.#grace !== undefined;
  }

  /** Makes the end of the writable side close the socket with 1001 (going away), as {@link ResumableServerStream.closeGoingAway} does. */
  markGoingAway(): void {
    this.#isGoingAway = true;
    this.socket?.markGoingAway();
  }

  /**
   * Ends the connection: its socket is closed 1001 (going away), its readable side ends. A client
   * away at that moment may still resume within the grace period to collect what it missed (its
   * last answers), then its socket is closed the same way.
   */
  closeGoingAway(): void {
    this.#isClosing = true;
    this.#isGoingAway = true;
    const socket = this.socket;
    if (socket) socket.closeGoingAway();
    else if (!this.isAwaitingResume) this.#end();
  }

  #attach(socket: FrameSocket): void {
    this.socket = socket;
    if (this.#isGoingAway) socket.markGoingAway();
    socket[MESSAGE_PORT].receiveFrames(this.#onFrame);
    let isNormal = false;
    socket.once('end', () => (isNormal = true));
    socket.on('error', ignore);
    socket.once('close', () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.releaseWrite();
      if (isNormal || this.#isClosing) return this.#end();
      this.#grace = setTimeout(() => this.#end(), this.#settings.graceMs);
    });
    // Flowing, so that a normal close's end of input is seen (frames go to the handler above).
    socket.resume();
  }

  readonly #onFrame = (frame: Buffer): void => {
    if (this.isOver) return;
    if (isControlCandidate(frame) && this.#onControl(frame)) return;
    this.#received++;
    if (this.#initializeKey === undefined && !this.#isAdvertised) this.#watchInitialize(frame);
    this.deliver(frame, 0);
    if (this.#ack.received(frame.length)) {
      if (this.socket) sendFrames(this.socket, [receivedAckText(this.#received)]);
    }
  };

  /** Takes a frame that starts as a control message; true when it was the client's `stream/ack` (its last cursor received). */
  #onControl(frame: Buffer): boolean {
    const acknowledged = readCursorAck(frame);
    if (acknowledged !== -1) {
      this.#buffer.releaseThrough(acknowledged);
      return true;
    }
    const control = controlOf(frame.toString('utf8'));
    if (control?.method !== STREAM_ACK_METHOD) return false;
    const { cursor } = control.params;
    if (typeof cursor === 'string') this.#buffer.release(cursor);
    return true;
  }

  #watchInitialize(frame: Buffer): void {
    if (!frame.includes('"initialize"')) return;
    const message = parseRouted(frame.toString('utf8'));
    if (message && isRequest(message) && message.method === 'initialize') this.#initializeKey = idKey(message.id);
  }

  #end(): void {
    clearTimeout(this.#grace);
    this.#grace = undefined;
    if (this.readableEnded || this.destroyed) return;
    // Its owner ended it (and reads no more): nothing is left to do.
    if (this.#isClosing) return void this.destroy();
    // Nothing can be sent any more: once everything received has been read, the stream is done.
    this.once('end', () => this.destroy());
    this.push(null);
  }

  /** Stamps, holds and sends agent lines; returns false when the socket is full (`onDrain` follows). */
  protected override sendLines(lines: string[], onDrain: () => void): boolean {
    // Stamped in place: the array is this stream's now.
    for (let i = 0; i < lines.length; i++) lines[i] = stampCursor(lines[i]!, this.#nextCursor++);
    return this.sendMessages(lines, onDrain);
  }

  /** Holds and sends agent messages, each stamped already (by its writer through the port, or by {@link ResumableServerStream.sendLines}). */
  protected override sendMessages(texts: string[], onDrain: () => void): boolean {
    const buffer = this.#buffer;
    for (let i = 0; i < texts.length; i++) {
      // Until the `initialize` answer has gone out with the capability.
      if (!this.#isAdvertised) texts[i] = this.#advertise(texts[i]!);
      buffer.append(texts[i]!);
    }
    const socket = this.socket;
    return !socket || texts.length === 0 || sendFrames(socket, texts, onDrain);
  }

  /** The `initialize` answer gains the `transport.resumable` capability. */
  #advertise(line: string): string {
    if (this.#initializeKey === undefined || !line.includes('"result"')) return line;
    const message = parseRouted(line);
    if (!message || !isResponse(message) || idKey(message.id) !== this.#initializeKey) return line;
    this.#isAdvertised = true;
    return advertiseResumable(line, this.#settings);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#isClosing = true;
    const socket = this.socket;
    if (socket) socket.end();
    // A client away may still resume within the grace period for what it missed (see closeGoingAway).
    else if (!this.isAwaitingResume) this.#end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.isOver = true;
    clearTimeout(this.#grace);
    this.#grace = undefined;
    this.releaseWrite();
    const socket = this.socket;
    this.socket = undefined;
    if (socket && !socket.destroyed) {
      if (error) socket.destroy();
      else socket.end();
    }
    callback(error);
  }
}

/** What {@link ResumableWebSockets.accept} does with a new socket's first frame. @internal */
export interface ResumableSocketHandlers {
  /** The socket opens a new connection: hand `stream` over as a new client. */
  onNew(stream: ResumableServerStream): void;
  /** The socket resumed (or failed to resume) an existing connection: it is no new client. */
  onNotNew(): void;
}

/** How long a socket admitted only to resume may take to send its `stream/resume` frame. */
const RESUME_FRAME_TIMEOUT_MS = 10_000;

/**
 * The resumable connections of one server, by connection id.
 *
 * @internal
 */
export class ResumableWebSockets {
  readonly #settings: ResumeSettings;
  readonly #streams = new Map<string, ResumableServerStream>();

  constructor(settings: ResumeSettings) {
    this.#settings = settings;
  }

  /** Whether this server holds the connection `connectionId` (a socket may resume it). */
  holds(connectionId: string): boolean {
    return this.#streams.has(connectionId);
  }

  /**
   * Waits for a new socket's first frame: `stream/resume` resumes a connection, anything else
   * opens `connectionId`; without one (a socket admitted only to resume), anything else is refused.
   */
  accept(socket: FrameSocket, connectionId: string | undefined, handlers: ResumableSocketHandlers): void {
    const port = socket[MESSAGE_PORT];
    socket.on('error', ignore);
    // A socket that holds no slot of its own must resume at once.
    const timer = connectionId === undefined ? setTimeout(() => socket.destroy(), RESUME_FRAME_TIMEOUT_MS) : undefined;
    socket.once('close', () => clearTimeout(timer));
    port.receiveFrames((frame) => {
      port.receiveFrames(undefined);
      clearTimeout(timer);
      const control = controlOf(frame.toString('utf8'));
      if (control?.method === STREAM_RESUME_METHOD) return this.#resume(socket, control.params, handlers);
      if (connectionId === undefined) return refuseResume(socket, `the first frame must be ${STREAM_RESUME_METHOD}`);
      const stream = new ResumableServerStream(connectionId, this.#settings);
      this.#streams.set(connectionId, stream);
      stream.once('close', () => {
        if (this.#streams.get(connectionId) === stream) this.#streams.delete(connectionId);
      });
      stream.start(socket);
      handlers.onNew(stream);
      stream.receive(frame);
    });
    socket.resume();
  }

  #resume(socket: FrameSocket, params: Record<string, unknown>, handlers: ResumableSocketHandlers): void {
    handlers.onNotNew();
    const { connectionId, cursor } = params;
    const stream = typeof connectionId === 'string' ? this.#streams.get(connectionId) : undefined;
    const cursorText = typeof cursor === 'string' ? cursor : null;
    const reason = !stream
      ? 'unknown connection'
      : cursor !== null && typeof cursor !== 'string'
        ? 'cursor must be a string or null'
        : stream.resumeOn(socket, cursorText);
    if (reason === undefined) return;
    refuseResume(socket, reason);
  }
}

/** Answers `stream/resume_failed` with `reason` and closes the socket. */
function refuseResume(socket: FrameSocket, reason: string): void {
  sendFrames(socket, [controlMessage(STREAM_RESUME_FAILED_METHOD, { reason })]);
  socket.end();
}

function ignore(): void {}
