// browser-flow.mjs: a real browser (Debian's headless Chromium, driven by
// playwright-core) clicks through HeyAira's sign-in and consent pages, driven
// by interop_browser_test.go, which registered the client, built the authorization
// URL (PKCE) and serves the loopback redirect URI that receives the code.
//
// Input: one JSON argument {authorizeURL, signinURL, callbackURL, artifactsDir,
// userDataDir, chromium, extraArgs (optional Chromium flags)}. Output: one JSON line on stdout, {ok: true, ...} or
// {ok: false, error, ...what was seen so far}. Diagnostics go to stderr.

import path from 'node:path';
import { chromium } from 'playwright-core';
import { report } from './report.mjs';

const cfg = JSON.parse(process.argv[2]);
const results = { screenshots: {} };

async function shot(page, name) {
  const file = path.join(cfg.artifactsDir, `browser-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  results.screenshots[name] = file;
}

async function main() {
  const context = await chromium.launchPersistentContext(cfg.userDataDir, {
    executablePath: cfg.chromium,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
      ...(cfg.extraArgs ?? [])],
    viewport: { width: 900, height: 900 },
    timeout: 60_000,
  });
  try {
    results.browserVersion = context.browser()?.version() ?? null;
    const page = context.pages()[0] ?? await context.newPage();
    page.setDefaultTimeout(20_000);

    // 1. The MCP client opens the authorization URL: not signed in, so the
    //    server sends the browser to the sign-in prompt.
    let res = await page.goto(cfg.authorizeURL);
    results.prompt = { status: res.status(), path: new URL(page.url()).pathname, h1: await page.locator('h1').innerText() };

    // 2. The user opens the one-time link: a page with a button, no redeeming yet.
    res = await page.goto(cfg.signinURL);
    results.signin = { status: res.status(), h1: await page.locator('h1').innerText(),
      button: await page.getByRole('button', { name: 'Sign in' }).count() };
    await shot(page, 'signin');

    // 3. The button redeems it, and the browser comes back to the authorization request.
    await Promise.all([page.waitForURL(u => u.pathname === '/oauth/authorize'),
      page.getByRole('button', { name: 'Sign in' }).click()]);
    results.consent = { h1: await page.locator('h1').innerText(), path: new URL(page.url()).pathname };
    const boxes = page.locator('input[type=checkbox][name=scope]');
    results.consent.scopes = [];
    for (let i = 0; i < await boxes.count(); i++) {
      const b = boxes.nth(i);
      results.consent.scopes.push({ name: await b.getAttribute('value'), checked: await b.isChecked() });
    }
    results.consent.documentsLegend = await page.locator('fieldset.documents legend').innerText();
    results.consent.projects = await page.locator('input[type=radio][name=project]').count();
    results.consent.text = (await page.locator('body').innerText()).replace(/\s+/g, ' ').trim();
    await shot(page, 'consent');

    // 4. Tick every permission, documents:read too, and approve.
    for (let i = 0; i < await boxes.count(); i++) await boxes.nth(i).check();
    await Promise.all([page.waitForURL(u => u.href.startsWith(cfg.callbackURL)),
      page.getByRole('button', { name: 'Approve' }).click()]);
    const landed = new URL(page.url());
    results.callback = { target: landed.origin + landed.pathname, text: (await page.locator('body').innerText()).trim() };
    await shot(page, 'callback');
  } finally {
    await context.close();
  }
}

await report(main, results);
