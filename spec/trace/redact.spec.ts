/**
 * Redaction of credentials in trace copies: the rules, and a real chain where the trace is
 * redacted and the wire is not.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { REDACTED, readTraceFile, redactCredentials } from '../../lib/trace';
import { AGENT_COMMAND, CLIENT_INIT, PASSTHROUGH_COMMAND, useTracedChains } from './helpers';

const SECRET_SERVER = {
  type: 'http',
  name: 'tools',
  url: 'https://mcp.example/api?mode=fast&token=s3cr3t-query#frag',
  headers: [
    { name: 'Authorization', value: 'Bearer s3cr3t-header' },
    { name: 'X-Request-Tag', value: 'kept' },
  ],
};

describe('redactCredentials()', () => {
  it('replaces the value of an Authorization header in an ACP headers array, and keeps other headers', () => {
    expect(redactCredentials({ headers: SECRET_SERVER.headers })).to.deep.equal({
      headers: [
        { name: 'Authorization', value: REDACTED },
        { name: 'X-Request-Tag', value: 'kept' },
      ],
    });
  });

  it('matches credential header names case-insensitively, in arrays and in header maps', () => {
    const input = {
      headers: [
        { name: 'proxy-authorization', value: 'a' },
        { name: 'COOKIE', value: 'b' },
        { name: 'Set-Cookie', value: 'c' },
        { name: 'x-api-key', value: 'd' },
      ],
      nested: { headers: { 'X-Api-Key': 'e', Accept: 'text/plain' } },
    };
    expect(redactCredentials(input)).to.deep.equal({
      headers: input.headers.map(({ name }) => ({ name, value: REDACTED })),
      nested: { headers: { 'X-Api-Key': REDACTED, Accept: 'text/plain' } },
    });
  });

  it('replaces the value of a credential-named env variable in an ACP env array and in an env map, and keeps the others', () => {
    const input = {
      env: [
        { name: 'GITHUB_TOKEN', value: 'a' },
        { name: 'openai-api-key', value: 'b' },
        { name: 'ACP_WIRE_MCP_TOKEN', value: 'c' },
        { name: 'DB_PASSWORD', value: 'd' },
        { name: 'ACP_WIRE_MCP_URL', value: 'http://127.0.0.1:1/mcp/x' },
        { name: 'PATH', value: '/usr/bin' },
      ],
      nested: { env: { AWS_SECRET_ACCESS_KEY: 'e', HOME: '/home/me' } },
    };
    expect(redactCredentials(input)).to.deep.equal({
      env: [
        { name: 'GITHUB_TOKEN', value: REDACTED },
        { name: 'openai-api-key', value: REDACTED },
        { name: 'ACP_WIRE_MCP_TOKEN', value: REDACTED },
        { name: 'DB_PASSWORD', value: REDACTED },
        { name: 'ACP_WIRE_MCP_URL', value: 'http://127.0.0.1:1/mcp/x' },
        { name: 'PATH', value: '/usr/bin' },
      ],
      nested: { env: { AWS_SECRET_ACCESS_KEY: REDACTED, HOME: '/home/me' } },
    });
  });

  it('replaces a token query value in an http(s) url and keeps the other pairs, their order and the fragment', () => {
    expect(redactCredentials({ url: SECRET_SERVER.url })).to.deep.equal({
      url: `https://mcp.example/api?mode=fast&token=${REDACTED}#frag`,
    });
  });

  it('recognizes credential query keys after percent-decoding, ignoring case, hyphens and underscores; valueless and repeated ones too', () => {
    const url = 'http://h/p?Access-Token=1&API%5FKEY=2&keep=%41&sig&password=3&password=4&keyboard=5';
    expect(redactCredentials({ url }).url).to.equal(
      `http://h/p?Access-Token=${REDACTED}&API%5FKEY=${REDACTED}&keep=%41&sig=${REDACTED}&password=${REDACTED}&password=${REDACTED}&keyboard=5`,
    );
  });

  it('removes userinfo from a url', () => {
    expect(redactCredentials({ url: 'https://alice:pw@example.com:8443/x?y=1' }).url).to.equal('https://example.com:8443/x?y=1');
  });

  it('replaces an http(s) url that does not parse whole, and leaves other strings and schemes alone', () => {
    expect(redactCredentials({ url: 'http://[not a host/?token=x' }).url).to.equal(REDACTED);
    const untouched = { url: 'file:///tmp/x?token=1', link: 'https://h/?token=1', text: 'Authorization: Bearer x' };
    expect(redactCredentials(untouched)).to.deep.equal(untouched);
  });

  it('leaves a url without credentials exactly as written', () => {
    const url = 'HTTPS://Example.COM/a%2Fb?q=%7E&x#f';
    expect(redactCredentials({ url }).url).to.equal(url);
  });

  it('does not modify its input', () => {
    const input = { mcpServers: [structuredClone(SECRET_SERVER)] };
    redactCredentials(input);
    expect(input).to.deep.equal({ mcpServers: [SECRET_SERVER] });
  });

  it('walks deeply nested values without overflowing the stack', () => {
    let deep: unknown = { url: 'https://h/?token=1' };
    for (let i = 0; i < 100_000; i++) deep = [deep];
    let redacted = redactCredentials(deep);
    for (let i = 0; i < 100_000; i++) redacted = (redacted as unknown[])[0];
    expect(redacted).to.deep.equal({ url: `https://h/?token=${REDACTED}` });
  });
});

describe('Conductor traceFile redaction', function () {
  this.timeout(30000);
  const chains = useTracedChains();

  it('redacts an Authorization header and a ?token= value in the trace, while every hop carries them unchanged', async () => {
    const file = join(chains.dir, 'trace.jsons');
    const chain = chains.start([PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND], { traceFile: file });
    await chain.client.sendRequest('initialize', CLIENT_INIT);
    const params = { cwd: '/', mcpServers: [SECRET_SERVER] };
    // The agent echoes what it received: the wire carried the credentials to it and back.
    expect(await chain.client.sendRequest('_test/echo', params)).to.deep.equal(params);
    await chain.client.sendRequest('session/new', params);

    const text = JSON.stringify(readTraceFile(file));
    expect(text).not.to.contain('s3cr3t');
    const redactedServer = {
      ...SECRET_SERVER,
      url: `https://mcp.example/api?mode=fast&token=${REDACTED}#frag`,
      headers: [{ name: 'Authorization', value: REDACTED }, SECRET_SERVER.headers[1]],
    };
    const traced = readTraceFile(file).filter((event) => event.type !== 'response' || event.from === 'Agent');
    const carrying = traced.filter((event) => JSON.stringify(event).includes('mcp.example'));
    // Three hops down for each of the two requests, and the echo's answer from the agent.
    expect(carrying).to.have.length(7);
    for (const event of carrying) {
      const value = event.type === 'response' ? event.payload : event.params;
      expect(value).to.deep.equal({ cwd: '/', mcpServers: [redactedServer] });
    }
  });
});
