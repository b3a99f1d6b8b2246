// interop-sdk.mjs: the official MCP TypeScript SDK client against a running
// HeyAira, driven by interop_test.go (which starts the server, the fake
// GitHub and the tenant, and asserts on what this prints).
//
// Input: one JSON argument {mcpURL, signinURL, sourceID, clientMetadataURL?}.
// With clientMetadataURL, only the client ID metadata document flow runs
// (cimdFlow below). Otherwise the client is given
// only mcpURL; everything else it learns from the server. This script plays
// both the MCP client (SDK Client + StreamableHTTPClientTransport with an
// in-memory OAuthClientProvider) and, where a user would, the browser
// (fetch with a cookie jar and redirect: 'manual').
//
// Output: one JSON line on stdout, {ok: true, ...results} or
// {ok: false, error, ...results so far}. Diagnostics go to stderr.

import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';

const cfg = JSON.parse(process.argv[2]);
const results = {};

// Where the "browser" would land at the end; nothing listens there: the
// browser below reads the 303's Location instead of following it.
const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

// ---- the MCP client's side: an OAuthClientProvider kept in memory ----

class MemoryProvider {
  constructor(name, onRedirect, clientMetadataUrl) {
    this.name = name;
    this.clientMetadataUrl = clientMetadataUrl; // CIMD: the SDK uses it as client_id when the server supports it
    this.onRedirect = onRedirect;
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this._discovery = undefined;
    this.lastState = undefined;
    this.redirects = 0;
  }
  get redirectUrl() { return REDIRECT_URI; }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    this.lastState = randomBytes(16).toString('base64url');
    return this.lastState;
  }
  clientInformation() { return this._client; }
  saveClientInformation(info) { this._client = info; }
  tokens() { return this._tokens; }
  saveTokens(tokens) { this._tokens = tokens; }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() {
    if (!this._verifier) throw new Error('no code verifier saved');
    return this._verifier;
  }
  saveDiscoveryState(s) { this._discovery = s; }
  discoveryState() { return this._discovery; }
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'client') this._client = undefined;
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this._verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this._discovery = undefined;
  }
  redirectToAuthorization(url) {
    this.redirects++;
    this.pendingURL = new URL(url);
    this.onRedirect?.(this.pendingURL);
  }
}

// ---- the browser's side: fetch with a cookie jar, no automatic redirects ----

class Browser {
  constructor(origin) {
    this.origin = origin;
    this.jar = new Map();
  }
  async fetch(url, init = {}) {
    url = new URL(url, this.origin);
    const headers = new Headers(init.headers);
    if (url.origin === this.origin && this.jar.size) {
      headers.set('cookie', [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '));
    }
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    if (url.origin === this.origin) {
      for (const line of res.headers.getSetCookie()) {
        const [pair, ...attrs] = line.split(';');
        const eq = pair.indexOf('=');
        const name = pair.slice(0, eq).trim();
        const value = pair.slice(eq + 1).trim();
        const maxAge = attrs.map(a => a.trim()).find(a => /^max-age=/i.test(a));
        if (value === '' || (maxAge && Number(maxAge.split('=')[1]) <= 0)) this.jar.delete(name);
        else this.jar.set(name, value);
      }
    }
    const body = await res.text();
    return { status: res.status, location: res.headers.get('location'), headers: res.headers, body, url };
  }
  postForm(url, fields) {
    const body = new URLSearchParams(fields);
    return this.fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }
}

function decodeEntities(s) {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos|#39);/gi, (m, e) => {
    const l = e.toLowerCase();
    if (l.startsWith('#x')) return String.fromCodePoint(parseInt(l.slice(2), 16));
    if (l.startsWith('#')) return String.fromCodePoint(parseInt(l.slice(1), 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[l];
  });
}

// parseForm returns the first form's action and its inputs and buttons.
function parseForm(html) {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error('no form on the page: ' + html.slice(0, 300));
  const attrs = tag => {
    const out = {};
    for (const m of tag.matchAll(/([a-z-]+)(?:="([^"]*)")?/gi)) out[m[1].toLowerCase()] = m[2] === undefined ? true : decodeEntities(m[2]);
    return out;
  };
  return {
    action: attrs(form[1]).action,
    method: attrs(form[1]).method,
    inputs: [...form[2].matchAll(/<input\b([^>]*)>/gi)].map(m => attrs(m[1])),
    buttons: [...form[2].matchAll(/<button\b([^>]*)>/gi)].map(m => attrs(m[1])),
    html: form[2],
  };
}

// signIn redeems a one-time link: GET shows the button (and sets the CSRF
// cookie), POST with the form's fields redeems it and sets the session.
async function signIn(browser, link) {
  const page = await browser.fetch(link);
  if (page.status !== 200) throw new Error(`GET sign-in link: ${page.status}`);
  const form = parseForm(page.body);
  const fields = Object.fromEntries(form.inputs.filter(i => i.type === 'hidden').map(i => [i.name, i.value]));
  const res = await browser.postForm(form.action, fields);
  return { getStatus: page.status, hiddenFields: Object.keys(fields).sort(), postStatus: res.status,
    location: res.location, sessionCookie: [...browser.jar.keys()].some(k => k.includes('heyaira_session')) };
}

// consent opens the authorization URL in the signed-in browser, reads the
// consent page, ticks the scopes in `tick` (and only those), approves (on a
// step-up page with documents:read in `tick`, with its own button), and
// returns what the page showed and what came back on the 303.
async function consent(browser, authURL, tick) {
  const page = await browser.fetch(authURL);
  const out = { pageStatus: page.status };
  if (page.status !== 200) throw new Error(`GET authorize: ${page.status} ${page.location ?? ''} ${page.body.slice(0, 300)}`);
  out.frameAncestorsNone = /frame-ancestors 'none'/.test(page.headers.get('content-security-policy') ?? '');
  const form = parseForm(page.body);
  out.scopesShown = form.inputs.filter(i => i.name === 'scope').map(i => ({ name: i.value, checked: !!i.checked }));
  out.documentsInOwnBox = /<fieldset class="documents">[\s\S]*?documents:read[\s\S]*?<\/fieldset>/.test(form.html);
  out.heading = decodeEntities((/<h1>([\s\S]*?)<\/h1>/.exec(page.body)?.[1] ?? '').replace(/<[^>]*>/g, ''));
  out.decisions = form.buttons.filter(b => b.name === 'decision').map(b => b.value);
  const projects = form.inputs.filter(i => i.name === 'project');
  out.projectsShown = projects.length;
  const body = new URLSearchParams();
  for (const i of form.inputs.filter(i => i.type === 'hidden')) body.append(i.name, i.value);
  body.append('project', projects[0].value);
  for (const s of out.scopesShown) if (tick.includes(s.name)) body.append('scope', s.name);
  // A step-up page asking for documents:read has no plain Approve: its
  // own button is the explicit approval of document reading.
  const withDocuments = tick.includes('documents:read') && out.decisions.includes('approve_documents');
  body.append('decision', withDocuments ? 'approve_documents' : 'approve');
  const res = await browser.fetch(form.action, { method: 'POST', body,
    headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  out.approveStatus = res.status;
  if (res.status !== 303 || !res.location) throw new Error(`approve: ${res.status} ${res.body.slice(0, 300)}`);
  const loc = new URL(res.location);
  out.redirectTarget = loc.origin + loc.pathname;
  out.paramCounts = Object.fromEntries(['code', 'state', 'iss', 'error'].map(k => [k, loc.searchParams.getAll(k).length]));
  out.state = loc.searchParams.get('state');
  out.iss = loc.searchParams.get('iss');
  out.code = loc.searchParams.get('code');
  return out;
}

// authorizeParams records what the SDK put on the authorization URL.
function authorizeParams(u) {
  const q = u.searchParams;
  return { endpoint: u.origin + u.pathname, responseType: q.get('response_type'), clientID: q.get('client_id'),
    codeChallengeMethod: q.get('code_challenge_method'), hasCodeChallenge: (q.get('code_challenge') ?? '').length === 43,
    redirectURI: q.get('redirect_uri'), scope: q.get('scope'), resource: q.get('resource'), hasState: !!q.get('state') };
}

// recordingFetch notes, while provider.record is an array, the path, status
// and challenge of every response the SDK's transport sees (its MCP requests
// and the token requests it makes on a 401 or 403).
function recordingFetch(provider) {
  return async (url, init) => {
    const res = await fetch(url, init);
    provider.record?.push({ method: init?.method ?? 'GET', path: new URL(url).pathname, status: res.status, wwwAuthenticate: res.headers.get('www-authenticate') ?? undefined });
    return res;
  };
}

// connect runs Client.connect; it reports 'unauthorized' when the SDK
// stopped to send the user to the authorization URL.
async function connect(provider) {
  const transport = new StreamableHTTPClientTransport(new URL(cfg.mcpURL), { authProvider: provider,
    fetch: recordingFetch(provider) });
  const client = new Client({ name: 'heyaira-interop', version: '1.0.0' });
  try {
    await client.connect(transport);
    return { client, transport, status: 'connected' };
  } catch (e) {
    if (e instanceof UnauthorizedError) return { client, transport, status: 'unauthorized' };
    throw e;
  }
}

// authorize takes the provider through the whole flow the way an app does:
// connect → UnauthorizedError + redirectToAuthorization → browser → code →
// transport.finishAuth(code) → connect again.
async function authorize(provider, browser, tick) {
  const first = await connect(provider);
  if (first.status !== 'unauthorized' || !provider.pendingURL) throw new Error(`connect without a token: ${first.status}`);
  const url = provider.pendingURL;
  provider.pendingURL = undefined;
  const out = { firstConnect: first.status, authorizeURL: authorizeParams(url) };
  const c = await consent(browser, url, tick);
  out.consent = { ...c, code: undefined };
  out.stateMatches = c.state === provider.lastState;
  out.issMatches = c.iss === new URL(cfg.mcpURL).origin;
  await first.transport.finishAuth(c.code);
  await first.client.close();
  const second = await connect(provider);
  out.secondConnect = second.status;
  out.tokenScope = provider.tokens()?.scope;
  out.tokenType = provider.tokens()?.token_type;
  out.expiresIn = provider.tokens()?.expires_in;
  out.hasRefreshToken = !!provider.tokens()?.refresh_token;
  return { out, client: second.client };
}

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

try {
  await main();
  console.log(JSON.stringify({ ok: true, ...results }));
} catch (e) {
  console.error(e);
  console.log(JSON.stringify({ ok: false, error: String(e?.stack ?? e), ...results }));
  process.exitCode = 1;
}
