// peer.mjs: the parts of a real MCP client's OAuth flow that the test
// scripts share: the TypeScript SDK's OAuthClientProvider kept in memory,
// a cookie-jar "browser" for sign-in and consent, and the connect/authorize
// sequence an app runs.

import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

// Where the "browser" would land at the end; nothing listens there: the
// browser below reads the 303's Location instead of following it.
export const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

// ---- the MCP client's side: an OAuthClientProvider kept in memory ----

export class MemoryProvider {
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

export class Browser {
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

export function decodeEntities(s) {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos|#39);/gi, (m, e) => {
    const l = e.toLowerCase();
    if (l.startsWith('#x')) return String.fromCodePoint(parseInt(l.slice(2), 16));
    if (l.startsWith('#')) return String.fromCodePoint(parseInt(l.slice(1), 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[l];
  });
}

// parseForm returns the first form's action and its inputs and buttons.
export function parseForm(html) {
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
export async function signIn(browser, link) {
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
export async function consent(browser, authURL, tick) {
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
export function authorizeParams(u) {
  const q = u.searchParams;
  return { endpoint: u.origin + u.pathname, responseType: q.get('response_type'), clientID: q.get('client_id'),
    codeChallengeMethod: q.get('code_challenge_method'), hasCodeChallenge: (q.get('code_challenge') ?? '').length === 43,
    redirectURI: q.get('redirect_uri'), scope: q.get('scope'), resource: q.get('resource'), hasState: !!q.get('state') };
}

// recordingFetch notes, while provider.record is an array, the path, status
// and challenge of every response the SDK's transport sees (its MCP requests
// and the token requests it makes on a 401 or 403).
export function recordingFetch(provider) {
  return async (url, init) => {
    const res = await fetch(url, init);
    provider.record?.push({ method: init?.method ?? 'GET', path: new URL(url).pathname, status: res.status, wwwAuthenticate: res.headers.get('www-authenticate') ?? undefined });
    return res;
  };
}

// v1 is the SDK the scripts use unless given another: an object with the
// same three classes (interop-sdk-v2.mjs passes @modelcontextprotocol/client's)
// and the Client's options.
const v1 = { Client, StreamableHTTPClientTransport, UnauthorizedError };

// connect runs Client.connect against mcpURL; it reports 'unauthorized'
// when the SDK stopped to send the user to the authorization URL.
export async function connect(mcpURL, provider, sdk = v1) {
  const transport = new sdk.StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider,
    fetch: recordingFetch(provider) });
  const client = new sdk.Client({ name: 'heyaira-interop', version: '1.0.0' }, sdk.options);
  try {
    await client.connect(transport);
    return { client, transport, status: 'connected' };
  } catch (e) {
    if (e instanceof sdk.UnauthorizedError) return { client, transport, status: 'unauthorized' };
    throw e;
  }
}

// authorize takes the provider through the whole flow the way an app does:
// connect → UnauthorizedError + redirectToAuthorization → browser → code →
// transport.finishAuth(code) → connect again.
export async function authorize(mcpURL, provider, browser, tick, sdk = v1) {
  const first = await connect(mcpURL, provider, sdk);
  if (first.status !== 'unauthorized' || !provider.pendingURL) throw new Error(`connect without a token: ${first.status}`);
  const url = provider.pendingURL;
  provider.pendingURL = undefined;
  const out = { firstConnect: first.status, authorizeURL: authorizeParams(url) };
  const c = await consent(browser, url, tick);
  out.consent = { ...c, code: undefined };
  out.stateMatches = c.state === provider.lastState;
  out.issMatches = c.iss === new URL(mcpURL).origin;
  // v2 checks the RFC 9207 issuer the server put on the redirect; v1 ignores it.
  await first.transport.finishAuth(c.code, c.iss);
  await first.client.close();
  const second = await connect(mcpURL, provider, sdk);
  out.secondConnect = second.status;
  out.tokenScope = provider.tokens()?.scope;
  out.tokenType = provider.tokens()?.token_type;
  out.expiresIn = provider.tokens()?.expires_in;
  out.hasRefreshToken = !!provider.tokens()?.refresh_token;
  return { out, client: second.client };
}
