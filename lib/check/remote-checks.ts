/**
 * The remote checks of the connection (`acp-wire check --url`): how `initialize` opens one and
 * names it, connection ids (202 for a request, 404 for an id the server does not hold), one answer
 * per request with its exact id, and acp-http-client's dialect (the connection in the path). The
 * checks of access and resumption are in remote-access-checks.ts.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import type { JsonObject } from '../jsonrpc/message';
import { HEADER_CONNECTION_ID } from '../transports/remote/remote-connection';
import { UNKNOWN_METHOD } from './context';
import type { Check } from './check';
import { type CheckOutcome, fail, notApplicable, pass, withEvidence } from './outcome';
import type { RemoteContext } from './remote-context';
import { authHeaders, HttpLink, type RemoteLink } from './remote-link';
import { RULES } from './rules';
import { shortText, type WireLine } from './wire-line';

/** A check of a remote server. */
type RemoteCheck = Check<RemoteContext>;

/** The event line a link recorded when it was opened (the upgrade, the `initialize` POST). */
export function openingLine(link: RemoteLink): WireLine | undefined {
  return link.transcript.find((line) => line.direction === 'event' && /^(upgraded|upgrade refused|POST initialize)/.test(line.text));
}

const initialize: RemoteCheck = {
  id: 'remote.initialize',
  group: 'remote',
  title:
    'a connection is opened and named (Acp-Connection-Id) by its upgrade or its initialize POST, and initialize is answered with a valid InitializeResponse',
  rule: RULES.httpInitialize,
  async run(context) {
    const { link, answer } = await context.link();
    const isWebSocket = context.settings.transport === 'websocket';
    const rule = isWebSocket ? RULES.wsConnectionId : RULES.httpInitialize;
    const evidence = [openingLine(link), answer];
    if (!isWebSocket && link.opening?.status !== 200)
      return withEvidence(fail(`the initialize POST was answered ${link.opening?.status}, not 200`, rule), ...evidence);
    if (link.connectionId === undefined || link.connectionId === '')
      return withEvidence(
        fail(`the ${isWebSocket ? '101 upgrade' : 'initialize answer'} named no ${HEADER_CONNECTION_ID}`, rule),
        ...evidence,
      );
    const result = answer.message?.result as JsonObject;
    const version = result.protocolVersion;
    if (version !== 1 && version !== 2)
      return withEvidence(fail(`initialize was answered with protocolVersion ${JSON.stringify(version)}`), answer);
    const errors = context.schema.errors('InitializeResponse', result, version);
    if (errors.length > 0)
      return withEvidence(fail(`${errors.length} schema error(s): ${errors.slice(0, 3).join('; ')}`, RULES.stdoutOnlyMessages), answer);
    return pass(`${HEADER_CONNECTION_ID}: ${link.connectionId}`);
  },
};

/** Over Streamable HTTP: a request naming the connection is answered 202 (its answer on the event stream); one naming an id the server does not hold, 404. */
async function httpConnectionIds(context: RemoteContext, link: HttpLink): Promise<CheckOutcome | undefined> {
  const sent = link.request(UNKNOWN_METHOD);
  await link.posted;
  const status = link.statuses.at(-1);
  if (status !== 202) return withEvidence(fail(`a request naming its connection was answered ${status}, not 202`), sent.line);
  if (!(await link.answer(sent, context.settings.timeoutMs)))
    return withEvidence(
      fail(`the answer to a request did not come on the event stream within ${context.settings.timeoutMs} ms`, RULES.alwaysAnswered),
      sent.line,
    );
  const body = `{"jsonrpc":"2.0","id":1,"method":"${UNKNOWN_METHOD}"}`;
  const headers = link.connectionHeaders({ 'content-type': 'application/json', [HEADER_CONNECTION_ID]: `acp-wire-check-${randomUUID()}` });
  const unknown = await context.exchange(context.settings.url, { method: 'POST', headers, body });
  if (unknown.status !== 404)
    return withEvidence(
      fail(`a POST naming a connection the server does not hold was answered ${unknown.status}, not 404`),
      ...unknown.lines,
    );
  return undefined;
}

const connectionIds: RemoteCheck = {
  id: 'remote.connection-id',
  group: 'remote',
  title: 'each connection has an id of its own; over HTTP a request naming it is answered 202, one naming an unknown id 404',
  rule: RULES.connectionIds,
  async run(context) {
    const first = await context.link();
    const second = await context.open();
    if (second.link.connectionId === first.link.connectionId)
      return withEvidence(
        fail(`two connections were both named ${first.link.connectionId}`),
        openingLine(first.link),
        openingLine(second.link),
      );
    if (first.link instanceof HttpLink) return (await httpConnectionIds(context, first.link)) ?? pass('202, and 404 for an unknown id');
    return pass(`${first.link.connectionId} and ${second.link.connectionId}`);
  },
};

/** Ids whose echo a careless server gets wrong: an integer beyond 2^53, a negative one, a string with a quote. */
const TRICKY_IDS = ['9007199254740993', '-1', '"id \\"quoted\\""'];

const oneAnswer: RemoteCheck = {
  id: 'remote.one-answer',
  group: 'remote',
  title: 'each request sent over the connection gets one answer, with its id exactly as sent',
  rule: RULES.oneResponse,
  async run(context) {
    const { link } = await context.link();
    const before = link.strays.length;
    const sent = TRICKY_IDS.map((rawId) => link.request(UNKNOWN_METHOD, undefined, rawId));
    for (const request of sent) await link.answer(request, context.settings.timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, context.settings.quietMs));
    const stray = link.strays[before];
    if (stray)
      return withEvidence(
        fail(`an answer matched no request as sent: ${shortText(stray.text)}`, RULES.idEchoed),
        ...sent.map((each) => each.line),
        stray,
      );
    const unanswered = sent.find((request) => request.answers.length === 0);
    if (unanswered)
      return withEvidence(fail(`the request with id ${unanswered.rawId} got no answer`, RULES.alwaysAnswered), unanswered.line);
    const twice = sent.find((request) => request.answers.length > 1);
    if (twice)
      return withEvidence(
        fail(`the request with id ${twice.rawId} was answered ${twice.answers.length} times`),
        twice.line,
        ...twice.answers,
      );
    return pass(`ids ${TRICKY_IDS.join(', ')}`);
  },
};

/** The URL of connection `id` in acp-http-client's dialect: the server's path, then the id. */
function pathUrl(url: URL, id: string): URL {
  return new URL(`${url.pathname.replace(/\/$/, '')}/${id}${url.search}`, url);
}

const pathDialect: RemoteCheck = {
  id: 'remote.path-dialect',
  group: 'remote',
  title: "acp-http-client's dialect: a connection named in the path, each request answered in its POST's body, a second initialize 409",
  rule: RULES.pathDialect,
  async run(context) {
    if (context.settings.transport !== 'http') return notApplicable('a Streamable HTTP dialect: the URL is a WebSocket one');
    const url = pathUrl(context.settings.url, `acp-wire-check-${randomUUID()}`);
    const headers = authHeaders(context.settings.token, { 'content-type': 'application/json' });
    const post = (body: string) => context.exchange(url, { method: 'POST', headers, body });
    const init = await post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":${JSON.stringify({ protocolVersion: 1 })}}`);
    if (init.status !== 200 || !init.body.includes('"result"'))
      return withEvidence(fail(`initialize at ${url.pathname} was answered ${init.status}, not 200 with its answer`), ...init.lines);
    const call = await post(`{"jsonrpc":"2.0","id":9007199254740993,"method":"${UNKNOWN_METHOD}"}`);
    if (call.status !== 200 || !call.body.includes('"id":9007199254740993'))
      return withEvidence(
        fail(`a request was answered ${call.status} without its answer (id 9007199254740993) in the body`),
        ...call.lines,
      );
    const again = await post('{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}');
    await context.exchange(url, { method: 'DELETE', headers });
    if (again.status !== 409)
      return withEvidence(fail(`a second initialize for the same connection was answered ${again.status}, not 409`), ...again.lines);
    return pass(`at ${url.pathname}`);
  },
};

/** The remote checks of connections and answers. */
export const REMOTE_CONNECTION_CHECKS: readonly RemoteCheck[] = [initialize, connectionIds, oneAnswer, pathDialect];
