/**
 * What the page of spec/browser/sdk-page.ts sends and reports, shared with the spec that opens it
 * (spec/browser/sdk-websocket.spec.ts). Types and constants only: both Node and the page load it.
 */

/** What the page saw of one turn: the updates up to its idle state. */
export interface TurnReport {
  /** The `messageId` that `session/prompt` answered. */
  readonly messageId: string;
  /** `messageId` of the turn's `user_message` update. */
  readonly userMessageId: string | undefined;
  /** Each update's `sessionUpdate` (and `state` for a `state_update`), consecutive repeats folded. */
  readonly kinds: string[];
  /** The text of the turn's `agent_message_chunk` updates, joined. */
  readonly text: string;
  /** The `stopReason` of the idle `state_update` that ended the turn. */
  readonly stopReason: string | null | undefined;
}

/** What the page reports: its run, or the error that stopped it. */
export type PageOutcome =
  | {
      readonly ok: true;
      readonly agentName: string;
      readonly protocolVersion: number;
      readonly turn: TurnReport;
      readonly cancelled: TurnReport;
    }
  | { readonly ok: false; readonly error: string };

/** The prompt of the turn that runs to its end, and of the turn that the page cancels. */
export const PROMPTS = { turn: 'hello from a web page', cancelled: 'a slow turn to cancel' } as const;
