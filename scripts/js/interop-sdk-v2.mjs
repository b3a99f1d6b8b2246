// interop-sdk-v2.mjs: the official MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client) against a running HeyAira, driven by
// interop_gosdk_test.go. Like interop-sdk.mjs, the client is given only the
// MCP URL: it discovers the authorization server from the 401, registers and
// runs PKCE through peer.mjs's MemoryProvider, and this script plays the
// browser for sign-in and consent.
//
// Input: one JSON argument {url, signinURL, sourceID, largeID, mode}; mode is
// the SDK's versionNegotiation mode, 'auto' (probe server/discover,
// 2026-07-28) or 'legacy' (initialize).
//
// Output: one JSON line {ok, flow, protocolVersion, tools, memoryGet,
// document, surfaces} or {ok: false, error, ...results so far}.

import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { Browser, MemoryProvider, authorize, signIn } from './peer.mjs';
import { report } from './report.mjs';
import { surfaces } from './surfaces.mjs';

const cfg = JSON.parse(process.argv[2]);
const out = {};
const sdk = { Client, StreamableHTTPClientTransport, UnauthorizedError,
  options: { versionNegotiation: { mode: cfg.mode } } };

async function main() {
  const browser = new Browser(new URL(cfg.url).origin);
  out.signin = await signIn(browser, cfg.signinURL);
  const provider = new MemoryProvider(`HeyAira interop (TypeScript SDK v2, ${cfg.mode})`);
  const flow = await authorize(cfg.url, provider, browser,
    ['memory:read', 'memory:write', 'documents:read', 'workflows:read'], sdk);
  out.flow = { ...flow.out, consent: undefined };
  const client = flow.client;
  out.protocolVersion = client.getNegotiatedProtocolVersion();
  const tools = await client.listTools();
  out.tools = tools.tools.map((t) => t.name);
  const key = `tsv2/${cfg.mode}`;
  out.memoryPut = await client.callTool({ name: 'memory_put', arguments: { key, content: 'from TS v2 é' } });
  out.memoryGet = await client.callTool({ name: 'memory_get', arguments: { key } });
  out.document = await client.callTool({ name: 'git_document_get', arguments: { source_id: cfg.sourceID } });
  out.surfaces = await surfaces(client, cfg);
  await client.close();
}

await report(main, out);
