/**
 * The one seam through which an output puts a `_meta` entry on every message it sends (a
 * resumable stream's cursor), whichever side serializes the message.
 *
 * @packageDocumentation
 * @internal
 */

/**
 * A `_meta` entry for every message handed over, in the order they are handed over: each gets
 * exactly one, either written in while the message is serialized ({@link MetaStamp.takeEntry}) or
 * put on the serialized text afterwards ({@link MetaStamp.stamp}).
 *
 * @remarks A message-framed transport that wants the entries offers one on its
 * `MessagePort`; the writer of the connection that owns it offers the connection one of its own,
 * which hands out the transport's entries and stamps, with the transport's, a message written
 * without taking its entry first. Writing the entry while serializing costs less than finding its
 * place in the text afterwards.
 * @internal
 */
export interface MetaStamp {
  /**
   * Takes the entry of the message handed over next, as `"key":value` JSON text: the caller writes
   * it first into the `_meta` of that message's `params` or `result` object as it serializes it,
   * and hands that message over next. `undefined` when no entry is wanted (any more).
   */
  takeEntry(): string | undefined;
  /**
   * Takes the entry of the message handed over next and puts it on `text`, that message
   * serialized without one (in `params._meta`, else `result._meta`, else a `_meta` of the message
   * itself).
   */
  stamp(text: string): string;
}
