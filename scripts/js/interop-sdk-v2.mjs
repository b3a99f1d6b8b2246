// interop-sdk-v2.mjs: the official MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client) against a running HeyAira, driven by
// interop_gosdk_test.go.
//
// Input: one JSON argument {url, token, sourceID, largeID, mode}; mode is the SDK's
// versionNegotiation mode, 'auto' (probe server/discover, 2026-07-28) or
// 'legacy' (initialize). The bearer token goes in requestInit headers.
//
// Output: one JSON line {ok, protocolVersion, tools, memoryGet, document,
// surfaces} or
// {ok: false, error}.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { surfaces } from './surfaces.mjs';

const cfg = JSON.parse(process.argv[2]);
const out = { ok: false };
try {
  const client = new Client({ name: 'heyaira-interop-v2', version: '1' },
    { versionNegotiation: { mode: cfg.mode } });
  const transport = new StreamableHTTPClientTransport(new URL(cfg.url),
    { requestInit: { headers: { Authorization: `Bearer ${cfg.token}` } } });
  await client.connect(transport);
  out.protocolVersion = client.getNegotiatedProtocolVersion();
  const tools = await client.listTools();
  out.tools = tools.tools.map((t) => t.name);
  const key = `tsv2/${cfg.mode}`;
  out.memoryPut = await client.callTool({ name: 'memory_put', arguments: { key, content: 'from TS v2 é' } });
  out.memoryGet = await client.callTool({ name: 'memory_get', arguments: { key } });
  out.document = await client.callTool({ name: 'git_document_get', arguments: { source_id: cfg.sourceID } });
  out.surfaces = await surfaces(client, cfg);
  await client.close();
  out.ok = true;
} catch (err) {
  out.error = String(err && err.stack || err);
}
console.log(JSON.stringify(out));
