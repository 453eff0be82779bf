/**
 * The framing checks: one JSON object per line and nothing else on stdout, UTF-8 both ways, CRLF
 * tolerated, a malformed line answered -32700 with the agent still serving.
 *
 * @packageDocumentation
 */
import { ErrorCode } from '../jsonrpc/errors';
import { stateOf, UNKNOWN_METHOD } from './context';
import { RULES } from './rules';
import type { Check } from './check';
import { fail, pass, withEvidence } from './outcome';
import { errorCodeOf, shortText, type WireLine } from './wire-line';

/** A request id made of characters of 2, 3 and 4 UTF-8 bytes. */
const UTF8_ID = 'ü-✓-😀';

const crlf: Check = {
  id: 'framing.crlf',
  group: 'framing',
  title: 'a line ended by CRLF is read as the line',
  rule: RULES.crlfIsWhitespace,
  async run(context) {
    const agent = await context.agent();
    const sent = agent.request(UNKNOWN_METHOD, { text: 'line ended by \\r\\n' }, undefined, '\r\n');
    const answer = await agent.nextLine((line) => sent.answers.includes(line) || agent.strays.includes(line), context.settings.timeoutMs);
    if (!answer)
      return withEvidence(fail(`no answer within ${context.settings.timeoutMs} ms to a request ended by CRLF${stateOf(agent)}`), sent.line);
    if (errorCodeOf(answer) === ErrorCode.ParseError)
      return withEvidence(fail(`a request ended by CRLF was answered as a parse error: ${shortText(answer.text)}`), sent.line, answer);
    return pass();
  },
};

const utf8: Check = {
  id: 'framing.utf8',
  group: 'framing',
  title: 'UTF-8 in (a character split across writes) and out (the id echoed)',
  rule: RULES.utf8,
  async run(context) {
    const agent = await context.agent();
    const text = `{"jsonrpc":"2.0","id":${JSON.stringify(UTF8_ID)},"method":"${UNKNOWN_METHOD}","params":{"text":"${UTF8_ID}"}}\n`;
    const bytes = Buffer.from(text, 'utf8');
    const split = bytes.indexOf(Buffer.from('😀', 'utf8')) + 2;
    const sent = agent.track(JSON.stringify(UTF8_ID), UNKNOWN_METHOD);
    agent.writeRaw(bytes.subarray(0, split));
    await context.pause(20);
    sent.line = agent.writeRaw(bytes.subarray(split))[0];
    const answer = await agent.nextLine((line) => sent.answers.includes(line) || agent.strays.includes(line), context.settings.timeoutMs);
    if (!answer)
      return withEvidence(
        fail(`no answer within ${context.settings.timeoutMs} ms to a request with the id ${JSON.stringify(UTF8_ID)}${stateOf(agent)}`),
        sent.line,
      );
    if (!answer.isUtf8) return withEvidence(fail(`the answer is not UTF-8: ${answer.bytes.toString('hex')}`), sent.line, answer);
    if (answer.message?.id !== UTF8_ID)
      return withEvidence(
        fail(`the id ${JSON.stringify(UTF8_ID)} came back as ${JSON.stringify(answer.message?.id)}: ${shortText(answer.text)}`),
        sent.line,
        answer,
      );
    return pass();
  },
};

const malformedLine: Check = {
  id: 'framing.malformed-line',
  group: 'framing',
  title: 'a malformed line is answered -32700 (id null) and the agent still serves',
  rule: RULES.parseErrorAnswered,
  async run(context) {
    const agent = await context.agent();
    const before = agent.strays.length;
    const [malformed] = agent.writeRaw('{"jsonrpc":"2.0","id":7,"method":\n');
    // A request right behind it: its answer shows the malformed line was read (and dropped, if nothing answered it).
    await context.expectServing(agent, 'a malformed line');
    const isParseError = (line: WireLine): boolean => errorCodeOf(line) === ErrorCode.ParseError;
    const answer =
      agent.strays.slice(before).find(isParseError) ??
      (await agent.nextLine((line) => agent.strays.indexOf(line) >= before && isParseError(line), context.settings.quietMs));
    if (!answer) {
      const other = agent.strays.slice(before)[0];
      if (other)
        return withEvidence(
          fail(`a malformed line was answered without -32700: ${shortText(other.text)}; it still serves`),
          malformed,
          other,
        );
      return withEvidence(fail('a malformed line got no answer (a request sent after it did); it still serves'), malformed);
    }
    if (answer.message?.id !== null)
      return withEvidence(
        fail(`the -32700 answer has no id (JSON-RPC: "id": null): ${shortText(answer.text)}; it still serves`, RULES.nullIdOnParseError),
        malformed,
        answer,
      );
    return pass();
  },
};

const jsonLines: Check = {
  id: 'framing.json-lines',
  group: 'framing',
  title: 'stdout holds only JSON objects, one per line, in UTF-8 (no banner, no log)',
  rule: RULES.stdoutOnlyMessages,
  isFinal: true,
  async run(context) {
    const lines = context.processes.flatMap((agent) => agent.lines);
    const bad = lines.filter((line) => line.message === undefined || !line.isUtf8);
    if (bad.length === 0) return pass(`${lines.length} lines`);
    const first = bad[0]!;
    const what = !first.isUtf8
      ? `not UTF-8: ${first.bytes.subarray(0, 80).toString('hex')}`
      : first.text === ''
        ? 'an empty line'
        : shortText(first.text);
    return withEvidence(fail(`${bad.length} of ${lines.length} lines are not one JSON object; the first: ${what}`), ...bad.slice(0, 5));
  },
};

/** The framing group. */
export const FRAMING_CHECKS: readonly Check[] = [crlf, utf8, malformedLine, jsonLines];
