/**
 * A connection's input side: the byte stream's listeners, the line decoder and the flow that
 * holds decoded messages while the output is full. What to do with a message is the connection's.
 *
 * @packageDocumentation
 * @internal
 */
import type { Readable } from 'node:stream';
import type { FrameTooLargeError, JsonParseError } from '../jsonrpc/errors';
import { LineDecoder } from './ndjson';
import { InputFlow, type DrainSource } from './backlog';
import { messagePortOf, type MessagePort } from './message-port';

/** What an {@link InputReader} tells its connection. @internal */
export interface InputEvents {
  /** One decoded message, in arrival order, when the output can take its answer. */
  dispatch(value: unknown, line: string): void;
  /** A line that is not JSON, or is over the size limit; the next line is read as usual. */
  undecodable(error: JsonParseError | FrameTooLargeError): void;
  /** The input ended (or was destroyed) and every message read before has been dispatched. */
  ended(): void;
  /** The input stream emitted `'error'`. */
  failed(error: Error): void;
  /** Whether the connection is closing or closed: from then on nothing is decoded or dispatched. */
  isClosed(): boolean;
  /** The input was paused (`true`, with the bytes held) or resumed (`false`). */
  held(isHeld: boolean, heldBytes: number): void;
}

/**
 * Reads NDJSON messages from a byte stream for a connection until {@link InputReader.detach}.
 *
 * @remarks An `'end'` ends the last line (a last line without a newline is delivered); a
 * `'close'` without `'end'` means the stream was destroyed: a partial last line is discarded, not
 * decoded. Either way {@link InputEvents.ended} comes once what was held has been dispatched. From
 * a stream that offers a {@link MessagePort} (a WebSocket), frames are taken directly, each decoded
 * as one line; its `'end'`, `'close'` and `'error'` still come from the stream.
 *
 * @internal
 */
export class InputReader {
  readonly #input: Readable;
  readonly #events: InputEvents;
  readonly #decoder: LineDecoder;
  readonly #flow: InputFlow;
  /** The input's message port, while frames are taken from it rather than read as bytes. */
  #port: MessagePort | undefined;

  constructor(input: Readable, events: InputEvents, maxLineBytes: number | undefined) {
    this.#input = input;
    this.#events = events;
    this.#flow = new InputFlow(input, {
      dispatch: events.dispatch,
      isClosed: events.isClosed,
      inputEnded: events.ended,
      inputHeld: events.held,
    });
    const flow = this.#flow;
    this.#decoder = new LineDecoder(
      { value: (value, line) => flow.accept(value, line), error: (error) => events.undecodable(error) },
      { maxLineBytes },
    );
    const port = messagePortOf(input);
    if (port?.receiveFrames(this.#onFrame)) {
      this.#port = port;
      // Flowing, so that 'end' is emitted; no bytes are pushed while frames are taken.
      input.resume();
    } else {
      input.on('data', this.#onData);
    }
    input.on('end', this.#onEnd);
    input.on('close', this.#onClose);
    input.on('error', this.#onError);
  }

  /** Bytes (characters) of the decoded messages held now. */
  get heldBytes(): number {
    return this.#flow.heldBytes;
  }

  /** The output cannot take more (`true`) or drained (`false`): hold messages, or dispatch what is held. */
  setOutputFull(isFull: boolean): void {
    this.#flow.setOutputFull(isFull);
  }

  /** Holds every later message until the returned function is called (see `InputFlow.holdDispatch`). */
  holdDispatch(): () => void {
    return this.#flow.holdDispatch();
  }

  /** Holds messages also while `relay`'s output is full; returns the function that stops it. */
  holdWhileFull(relay: DrainSource): () => void {
    return this.#flow.holdWhileFull(relay);
  }

  /** Stops reading: removes the listeners, pauses the input and ignores its later errors. */
  detach(): void {
    const input = this.#input;
    input.removeListener('data', this.#onData);
    input.removeListener('end', this.#onEnd);
    input.removeListener('close', this.#onClose);
    input.removeListener('error', this.#onError);
    input.on('error', ignore);
    // Frames go back to the stream first: pausing it must not pause the socket, whose close
    // frame still has to be read.
    this.#port?.receiveFrames(undefined);
    this.#port = undefined;
    input.pause();
  }

  readonly #onData = (chunk: Buffer | string): void => {
    this.#decoder.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  };

  readonly #onFrame = (frame: Buffer, start: number): void => this.#decoder.writeFrame(frame, start);

  readonly #onEnd = (): void => {
    if (this.#events.isClosed()) return;
    this.#decoder.end();
    // Messages held back are still dispatched: the end is reported after them.
    if (this.#flow.end()) this.#events.ended();
  };

  readonly #onClose = (): void => {
    if (this.#events.isClosed()) return;
    if (this.#input.readableEnded === false) this.#decoder.discard();
    this.#onEnd();
  };

  readonly #onError = (error: Error): void => this.#events.failed(error);
}

function ignore(): void {}
