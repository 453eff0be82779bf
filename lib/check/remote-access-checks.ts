/**
 * The remote checks of access and resumption: 401/403 without the token (`--token`), 503 with
 * `Retry-After` at capacity (`--max-clients`), and, where the server advertises
 * `transport.resumable`, a dropped stream resumed (WebSocket `stream/resume`, HTTP `Last-Event-ID`)
 * and a cursor it never gave refused (`stream/resume_failed`, 409).
 *
 * @packageDocumentation
 */
import type { JsonObject } from '../jsonrpc/message';
import { HEADER_CONNECTION_ID } from '../transports/remote/remote-connection';
import { controlMessage, STREAM_RESUME_METHOD } from '../transports/remote/resume/control-messages';
import { cursorOf } from '../transports/remote/resume/stream-cursor';
import { initializeParams, UNKNOWN_METHOD } from './context';
import type { Check } from './check';
import { CheckFailure, type CheckOutcome, fail, notApplicable, pass, withEvidence } from './outcome';
import type { RemoteContext } from './remote-context';
import { openingLine } from './remote-checks';
import { authHeaders, HttpLink, type RemoteLink, type WsLink } from './remote-link';
import { RULES } from './rules';
import type { WireLine } from './wire-line';

type RemoteCheck = Check<RemoteContext>;

/** How the server answers opening a connection with `authorization` (none: no header): the status, and the lines that show it. */
async function openingStatus(context: RemoteContext, token: string | null): Promise<{ status: number; lines: (WireLine | undefined)[] }> {
  if (context.settings.transport === 'websocket') {
    const link = context.newLink(token) as WsLink;
    const opening = await link.open();
    return { status: opening.status, lines: [openingLine(link)] };
  }
  const headers = authHeaders(token ?? undefined, { 'content-type': 'application/json' });
  const answer = await context.exchange(context.settings.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeParams(2) }),
  });
  const id = answer.headers[HEADER_CONNECTION_ID.toLowerCase()];
  if (typeof id === 'string')
    await context.exchange(context.settings.url, { method: 'DELETE', headers: { ...headers, [HEADER_CONNECTION_ID]: id } });
  return { status: answer.status, lines: answer.lines };
}

const auth: RemoteCheck = {
  id: 'remote.auth',
  group: 'remote',
  title: 'without its token a client is refused 401, with a wrong one 401 or 403, before any agent starts',
  rule: RULES.unauthorized,
  async run(context) {
    if (context.settings.token === undefined) return notApplicable('no --token given: the server is not known to need one');
    const none = await openingStatus(context, null);
    if (none.status !== 401) return withEvidence(fail(`a client without a token was answered ${none.status}, not 401`), ...none.lines);
    const wrong = await openingStatus(context, `${context.settings.token}-wrong`);
    if (wrong.status !== 401 && wrong.status !== 403)
      return withEvidence(fail(`a client with a wrong token was answered ${wrong.status}, not 401 or 403`), ...wrong.lines);
    return pass(`${none.status} without, ${wrong.status} with a wrong one`);
  },
};

/** Opens connections (kept open) until the server refuses one, at most `count`; returns the refused one, if any. */
async function fillUntilRefused(context: RemoteContext, count: number): Promise<RemoteLink | undefined> {
  for (let n = 0; n < count; n++) {
    const link = context.newLink();
    try {
      await context.initializeLink(link);
    } catch (error) {
      if (error instanceof CheckFailure && link.opening !== undefined && link.opening.status !== 200 && link.opening.status !== 101)
        return link;
      throw error;
    }
  }
  return undefined;
}

const capacity: RemoteCheck = {
  id: 'remote.capacity',
  group: 'remote',
  title: 'at its client limit, the server refuses the next client 503 with Retry-After',
  rule: RULES.capacity,
  async run(context) {
    const { maxClients } = context.settings;
    if (maxClients === undefined) return notApplicable("no --max-clients given: the server's limit is not known");
    await context.link();
    // Slots of connections closed just before may not be free yet: the refusal may come sooner, never later.
    const refused = await fillUntilRefused(context, maxClients);
    if (!refused) return fail(`${maxClients + 1} clients at once were admitted by a server serving ${maxClients}`);
    const { status, headers } = refused.opening!;
    const evidence = openingLine(refused);
    if (status !== 503) return withEvidence(fail(`a client beyond the limit was answered ${status}, not 503`), evidence);
    if (headers['retry-after'] === undefined)
      return withEvidence(fail('a client beyond the limit was refused 503 without Retry-After'), evidence);
    return pass(`refused 503 with Retry-After: ${String(headers['retry-after'])}`);
  },
};

/** Whether an `initialize` answer advertises `transport.resumable` (in `capabilities` for v2, `agentCapabilities` for v1). */
function isResumable(answer: WireLine): boolean {
  const result = answer.message?.result as JsonObject | undefined;
  const capabilities = (result?.capabilities ?? result?.agentCapabilities) as { transport?: { resumable?: unknown } } | undefined;
  return capabilities?.transport?.resumable !== undefined;
}

/** A new connection with two answered requests, their answers' cursors, then its stream dropped. */
async function droppedWithCursors(context: RemoteContext): Promise<{ link: RemoteLink; answers: WireLine[] } | CheckOutcome> {
  const { link } = await context.open();
  const answers: WireLine[] = [];
  for (let i = 0; i < 2; i++) {
    const answer = await link.answer(link.request(UNKNOWN_METHOD), context.settings.timeoutMs);
    if (!answer) return fail('a request got no answer', RULES.alwaysAnswered);
    if (cursorOf(answer.text) === undefined)
      return withEvidence(fail('a message of a resumable connection carries no _meta["acp/cursor"]'), answer);
    answers.push(answer);
  }
  link.drop();
  return { link, answers };
}

/** Resumes `link`'s connection after `cursor`: a new socket's `stream/resume`, or a `GET` with `Last-Event-ID`. Returns where to look for what came back, and the refusal status over HTTP. */
async function resume(
  context: RemoteContext,
  link: RemoteLink,
  cursor: string,
): Promise<{ on: RemoteLink; from: number; status?: number }> {
  if (link instanceof HttpLink) {
    const from = link.lines.length;
    const stream = await link.openStream(cursor);
    return { on: link, from, status: stream.status };
  }
  const resumed = context.newLink() as WsLink;
  await resumed.open({ [HEADER_CONNECTION_ID]: link.connectionId ?? '' });
  resumed.writeRaw(`${controlMessage(STREAM_RESUME_METHOD, { connectionId: link.connectionId, cursor })}\n`);
  return { on: resumed, from: 0 };
}

const resumeCheck: RemoteCheck = {
  id: 'remote.resume',
  group: 'remote',
  title: 'where advertised, a dropped stream resumed after a cursor replays what came after it, with the same cursors',
  rule: RULES.resumeReplay,
  async run(context) {
    const { answer } = await context.link();
    if (!isResumable(answer)) return notApplicable('the server does not advertise transport.resumable');
    const dropped = await droppedWithCursors(context);
    if ('status' in dropped) return dropped;
    const [first, second] = dropped.answers as [WireLine, WireLine];
    const { on, from, status } = await resume(context, dropped.link, cursorOf(first.text)!);
    if (status !== undefined && status !== 200)
      return withEvidence(fail(`the resume after cursor ${cursorOf(first.text)} was answered ${status}`), first, second);
    const replayed = await on.lineAfter(from, (line) => cursorOf(line.text) === cursorOf(second.text), context.settings.timeoutMs);
    if (!replayed)
      return withEvidence(
        fail(`the message after cursor ${cursorOf(first.text)} (cursor ${cursorOf(second.text)}) was not replayed`),
        first,
        second,
      );
    if (replayed.text !== second.text) return withEvidence(fail('the replayed message differs from the original'), second, replayed);
    return pass(`replayed cursor ${cursorOf(second.text)}`);
  },
};

const resumeRefused: RemoteCheck = {
  id: 'remote.resume-refused',
  group: 'remote',
  title: 'where advertised, a resume after a cursor the server never gave is refused (409, stream/resume_failed), never a live stream',
  rule: RULES.resumeRefused,
  async run(context) {
    const { answer } = await context.link();
    if (!isResumable(answer)) return notApplicable('the server does not advertise transport.resumable');
    const dropped = await droppedWithCursors(context);
    if ('status' in dropped) return dropped;
    const { on, from, status } = await resume(context, dropped.link, '987654321');
    if (status !== undefined)
      return status === 409 ? pass('409') : fail(`a resume after a cursor never given was answered ${status}, not 409`);
    const reply = await on.lineAfter(from, (line) => /"method":"stream\//.test(line.text), context.settings.timeoutMs);
    // The server holds the dropped connection for a resume: resumed properly, it is closed with the check's links.
    await resume(context, dropped.link, cursorOf(dropped.answers[1]!.text)!);
    if (reply?.message?.method === 'stream/resume_failed')
      return pass(`stream/resume_failed: ${String((reply.message.params as JsonObject | undefined)?.reason)}`);
    return withEvidence(
      fail(`a resume after a cursor never given was answered ${reply ? reply.text : 'with nothing'}, not stream/resume_failed`),
      reply,
    );
  },
};

/** The remote checks of access and resumption. */
export const REMOTE_ACCESS_CHECKS: readonly RemoteCheck[] = [auth, resumeCheck, resumeRefused, capacity];
