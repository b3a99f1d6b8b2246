// interop-sdk.mjs: the official MCP TypeScript SDK client against a running
// HeyAira, driven by interop_test.go (which starts the server, the fake
// GitHub and the tenant, and asserts on what this prints).
//
// Input: one JSON argument {mcpURL, signinURL, sourceID, largeID, clientMetadataURL?}.
// With clientMetadataURL, only the client ID metadata document flow runs
// (cimdFlow below). Otherwise the client is given
// only mcpURL; everything else it learns from the server. This script plays
// both the MCP client (SDK Client + StreamableHTTPClientTransport with an
// in-memory OAuthClientProvider) and, where a user would, the browser
// (fetch with a cookie jar and redirect: 'manual').
//
// Output: one JSON line on stdout, {ok: true, ...results} or
// {ok: false, error, ...results so far}. Diagnostics go to stderr.

import { createHash } from 'node:crypto';
import { refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { Browser, MemoryProvider, authorize as authorizeAt, connect as connectTo, signIn } from './peer.mjs';
import { report } from './report.mjs';
import { surfaces } from './surfaces.mjs';

const cfg = JSON.parse(process.argv[2]);
const results = {};

const connect = provider => connectTo(cfg.mcpURL, provider);
const authorize = (provider, browser, tick) => authorizeAt(cfg.mcpURL, provider, browser, tick);

async function readDocument(client) {
  const res = await client.callTool({ name: 'git_document_get', arguments: { source_id: cfg.sourceID } });
  const sc = res.structuredContent ?? {};
  const text = res.content?.[0]?.text ?? '';
  return { isError: !!res.isError, contentSHA256: createHash('sha256').update(sc.content ?? '', 'utf8').digest('hex'),
    contentLength: Buffer.byteLength(sc.content ?? '', 'utf8'), sha256: sc.sha256, fragmentSHA256: sc.fragment_sha256,
    hasNextCursor: 'next_cursor' in sc, textMatchesStructured: text !== '' && JSON.stringify(JSON.parse(text)) === JSON.stringify(sc),
    errorCode: sc.error?.code };
}

function describeError(e) {
  return { name: e?.constructor?.name, code: e?.code, errorCode: e?.errorCode, message: String(e?.message ?? e).slice(0, 300) };
}

async function rawMCPStatus(accessToken) {
  const res = await fetch(cfg.mcpURL, { method: 'POST', headers: { 'content-type': 'application/json',
    accept: 'application/json, text/event-stream', authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
  await res.text();
  return { status: res.status, wwwAuthenticate: res.headers.get('www-authenticate') };
}

// cimdFlow: a client configured with a clientMetadataUrl (SEP-991) runs the
// whole flow, refreshes, and never registers.
async function cimdFlow(browser) {
  const p = new MemoryProvider('unused: the document names the client', undefined, cfg.clientMetadataURL);
  const flow = await authorize(p, browser, ['memory:read', 'documents:read']);
  results.cimd = flow.out;
  results.cimd.clientID = p.clientInformation()?.client_id;
  results.cimd.tools = (await flow.client.listTools()).tools.length;
  await flow.client.close();
  const disc = p.discoveryState();
  const fresh = await refreshAuthorization(disc.authorizationServerUrl, { metadata: disc.authorizationServerMetadata,
    clientInformation: p.clientInformation(), refreshToken: p.tokens().refresh_token,
    resource: new URL(disc.resourceMetadata.resource) });
  results.cimd.refreshed = !!fresh.access_token && fresh.refresh_token !== p.tokens().refresh_token;
}

async function main() {
  const browser = new Browser(new URL(cfg.mcpURL).origin);
  results.signin = await signIn(browser, cfg.signinURL);
  if (cfg.clientMetadataURL) return cimdFlow(browser);

  // A: everything ticked, documents:read included.
  const a = new MemoryProvider('HeyAira interop (TypeScript SDK, full)');
  const flowA = await authorize(a, browser, ['memory:read', 'memory:write', 'tasks:read', 'tasks:write',
    'documents:read', 'workflows:read', 'workflows:write']);
  results.full = flowA.out;
  results.full.registered = { clientID: a.clientInformation()?.client_id, redirectURIs: a.clientInformation()?.redirect_uris,
    authMethod: a.clientInformation()?.token_endpoint_auth_method, hasSecret: !!a.clientInformation()?.client_secret };
  const tools = await flowA.client.listTools();
  results.full.tools = tools.tools.map(t => t.name).sort();
  results.full.document = await readDocument(flowA.client);
  if (cfg.largeID) results.full.surfaces = await surfaces(flowA.client, cfg);
  await flowA.client.close();

  // Refresh with the SDK's own refreshAuthorization, then use the new token.
  const disc = a.discoveryState();
  const old = a.tokens();
  const refreshArgs = refreshToken => ({ metadata: disc.authorizationServerMetadata, clientInformation: a.clientInformation(),
    refreshToken, resource: new URL(disc.resourceMetadata.resource) });
  const fresh = await refreshAuthorization(disc.authorizationServerUrl, refreshArgs(old.refresh_token));
  a.saveTokens({ ...fresh, issuer: old.issuer });
  results.refresh = { rotated: fresh.refresh_token !== old.refresh_token, newAccess: fresh.access_token !== old.access_token,
    scope: fresh.scope, tokenType: fresh.token_type, expiresIn: fresh.expires_in };
  const afterRefresh = await connect(a);
  results.refresh.connect = afterRefresh.status;
  results.refresh.document = await readDocument(afterRefresh.client);
  await afterRefresh.client.close();
  results.refresh.oldAccess = await rawMCPStatus(old.access_token);
  // Reusing the rotated refresh token is refused and revokes the family.
  try {
    await refreshAuthorization(disc.authorizationServerUrl, refreshArgs(old.refresh_token));
    results.refresh.reuse = { refused: false };
  } catch (e) {
    results.refresh.reuse = { refused: true, ...describeError(e) };
  }
  results.refresh.newAccessAfterReuse = await rawMCPStatus(fresh.access_token);
  results.refresh.oldAccessAfterReuse = await rawMCPStatus(old.access_token);

  // B: a second client, approved WITHOUT documents:read (same signed-in browser).
  const b = new MemoryProvider('HeyAira interop (TypeScript SDK, no documents)');
  const flowB = await authorize(b, browser, ['memory:read', 'tasks:read']);
  results.narrow = flowB.out;
  const before = b.tokens();
  b.record = [];
  try {
    const doc = await readDocument(flowB.client);
    results.narrow.document = { refused: false, ...doc };
  } catch (e) {
    results.narrow.document = { refused: true, ...describeError(e) };
  }
  // On the 403 the v1 SDK refreshed (it holds a refresh token) and retried;
  // the refresh must not have added documents:read.
  results.narrow.afterStepUp = { refreshed: b.tokens()?.refresh_token !== before.refresh_token, scope: b.tokens()?.scope,
    redirects: b.redirects, responses: b.record };
  b.record = undefined;
  const memory = await flowB.client.callTool({ name: 'memory_list', arguments: {} }).catch(e => ({ thrown: describeError(e) }));
  results.narrow.memoryList = { isError: !!memory.isError, thrown: memory.thrown };
  await flowB.client.close().catch(() => {});

  // B again: the user starts a new authorization (tokens dropped); the consent
  // page is shown again and this time documents:read is ticked.
  b.invalidateCredentials('tokens');
  const flowB2 = await authorize(b, browser, ['memory:read', 'tasks:read', 'documents:read']);
  results.stepUp = flowB2.out;
  results.stepUp.sameClient = flowB2.out.authorizeURL.clientID === flowB.out.authorizeURL.clientID;
  results.stepUp.document = await readDocument(flowB2.client);
  await flowB2.client.close();
}

await report(main, results);
