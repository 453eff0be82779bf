/**
 * `session/list` as the ACP TCK checks it (ACP-LIST-201..204), and the schema's cursor pagination
 * and `cwd` filter, served by `AcpAgent` from its session store.
 */
import { expect } from 'chai';
import { isAbsolute } from 'node:path';
import { ErrorCode, MemorySessionStore } from '../../../lib';
import { AgentUnderTest } from '../../helpers/baseline';

interface ListResult {
  sessions: { sessionId: string; cwd: string; updatedAt?: string; title?: string; additionalDirectories?: string[] }[];
  nextCursor?: string;
}

describe('AcpAgent session/list', () => {
  let under: AgentUnderTest;
  afterEach(() => under.close());

  it('ACP-LIST-201: succeeds with a sessions array, valid by the v2 schema, naming the session just made', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    const sessionId = await under.newSession('/work/a');
    const { sessions } = await under.result<ListResult>('session/list', {});
    expect(sessions.map((s) => [s.sessionId, s.cwd])).to.deep.equal([[sessionId, '/work/a']]);
    expect(Date.parse(sessions[0]!.updatedAt!)).to.be.a('number').and.not.NaN;
  });

  it('ACP-LIST-202: a cwd filter that matches no session answers an empty array, not an error', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    await under.newSession('/work/a');
    expect(await under.result('session/list', { cwd: '/work/none' })).to.deep.equal({ sessions: [] });
  });

  it('ACP-LIST-203: a cwd filter answers only the sessions of exactly that directory (not its subdirectories)', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    const a = await under.newSession('/work/a');
    await under.newSession('/work/a/sub');
    await under.newSession('/work/b');
    const { sessions } = await under.result<ListResult>('session/list', { cwd: '/work/a' });
    expect(sessions.map((s) => s.sessionId)).to.deep.equal([a]);
  });

  it('ACP-LIST-204: every listed cwd is absolute; a relative cwd in session/new or as a filter is -32602', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    await under.newSession('/work/a');
    expect(await under.errorCode('session/new', { cwd: 'relative/dir', mcpServers: [] })).to.equal(ErrorCode.InvalidParams);
    expect(await under.errorCode('session/list', { cwd: 'relative/dir' })).to.equal(ErrorCode.InvalidParams);
    const { sessions } = await under.result<ListResult>('session/list');
    expect(sessions).to.have.length(1);
    for (const session of sessions) expect(isAbsolute(session.cwd), session.cwd).to.equal(true);
  });

  it('pages with nextCursor, newest first, every session exactly once, the last page without a cursor', async () => {
    under = new AgentUnderTest({ sessions: new MemorySessionStore({ pageSize: 2 }) });
    await under.initialize();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await under.newSession(`/work/${i}`));
    const seen: string[] = [];
    const times: string[] = [];
    const cursors: (string | undefined)[] = [];
    let cursor: string | undefined;
    do {
      const page = await under.result<ListResult>('session/list', cursor === undefined ? {} : { cursor });
      expect(page.sessions.length).to.be.at.most(2);
      seen.push(...page.sessions.map((s) => s.sessionId));
      times.push(...page.sessions.map((s) => s.updatedAt!));
      cursor = page.nextCursor;
      cursors.push(cursor);
    } while (cursor !== undefined);
    expect([...seen].sort()).to.deep.equal([...made].sort());
    expect(times).to.deep.equal([...times].sort().reverse());
    expect(cursors).to.have.length(3);
  });

  it('a session made or used between two pages neither repeats nor hides the others', async () => {
    under = new AgentUnderTest({ sessions: new MemorySessionStore({ pageSize: 2 }) });
    await under.initialize();
    const made: string[] = [];
    for (let i = 0; i < 4; i++) made.push(await under.newSession(`/work/${i}`));
    const first = await under.result<ListResult>('session/list');
    made.push(await under.newSession('/work/new'));
    const rest: string[] = [];
    let cursor = first.nextCursor;
    while (cursor !== undefined) {
      const page = await under.result<ListResult>('session/list', { cursor });
      rest.push(...page.sessions.map((s) => s.sessionId));
      cursor = page.nextCursor;
    }
    const listed = [...first.sessions.map((s) => s.sessionId), ...rest];
    expect(new Set(listed).size).to.equal(listed.length);
    expect(made.slice(0, 4).every((id) => listed.includes(id))).to.equal(true);
  });

  it('answers -32602 for a cursor it did not give', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    expect(await under.errorCode('session/list', { cursor: 'not-a-cursor' })).to.equal(ErrorCode.InvalidParams);
    expect(await under.errorCode('session/list', { cursor: 7 })).to.equal(ErrorCode.InvalidParams);
  });

  it('lists closed sessions too, with their additionalDirectories, and the title a turn set', async () => {
    under = new AgentUnderTest({
      prompt(turn) {
        turn.update({ sessionUpdate: 'session_info_update', title: 'A title' });
        return 'end_turn';
      },
    });
    await under.initialize();
    const { sessionId } = await under.result<{ sessionId: string }>('session/new', {
      cwd: '/work/a',
      mcpServers: [],
      additionalDirectories: ['/work/lib'],
    });
    await under.result('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    await under.untilIdle(sessionId);
    await under.result('session/close', { sessionId });
    const { sessions } = await under.result<ListResult>('session/list');
    expect(sessions).to.have.length(1);
    expect(sessions[0]).to.deep.include({ sessionId, cwd: '/work/a', additionalDirectories: ['/work/lib'], title: 'A title' });
  });

  it('is served in ACP v1 too', async () => {
    under = new AgentUnderTest();
    await under.initialize(1);
    const sessionId = await under.newSession('/work/v1');
    const { sessions } = await under.result<ListResult>('session/list');
    expect(sessions.map((s) => s.sessionId)).to.deep.equal([sessionId]);
  });
});
