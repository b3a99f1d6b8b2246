// demo-flow.mjs: a new user's first session with the demo, through the
// official MCP TypeScript SDK client. demo_test.go runs scripts/dev in a
// clean copy of the repository and hands this script what scripts/dev
// printed.
//
// Input: one JSON argument {mcpURL, signinURL}.
// It signs in with the link, approves every scope on the consent page
// (document reading ticked), then calls runtime_bootstrap_get to learn the
// allowlisted sources, reads the runtime document and the guide with
// git_document_get following next_cursor to the end, creates a task and
// dispatches the engineer profile for it.
//
// Output: one JSON line on stdout, {ok: true, ...results} or
// {ok: false, error, ...results so far}. Diagnostics go to stderr.

import { createHash } from 'node:crypto';
import { Browser, MemoryProvider, authorize, signIn } from './peer.mjs';
import { report } from './report.mjs';

const cfg = JSON.parse(process.argv[2]);
const results = {};

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  const sc = res.structuredContent ?? {};
  if (res.isError) throw new Error(`${name}: ${JSON.stringify(sc.error ?? res.content)}`);
  return sc;
}

async function main() {
  const browser = new Browser(new URL(cfg.mcpURL).origin);
  results.signin = await signIn(browser, cfg.signinURL);
  const provider = new MemoryProvider('HeyAira demo (TypeScript SDK)');
  const flow = await authorize(cfg.mcpURL, provider, browser, ['memory:read', 'memory:write', 'tasks:read',
    'tasks:write', 'documents:read', 'workflows:read', 'workflows:write']);
  results.oauth = { secondConnect: flow.out.secondConnect, tokenScope: flow.out.tokenScope,
    heading: flow.out.consent.heading };
  const client = flow.client;
  results.tools = (await client.listTools()).tools.map(t => t.name).sort();

  const boot = await call(client, 'runtime_bootstrap_get', {});
  results.bootstrap = boot.sources.map(s => ({ role: s.role, path: s.path, commitSHA: s.commit_sha, trackingRef: s.tracking_ref }));
  const runtimeSource = boot.sources.find(s => s.role === 'runtime');
  const guideSource = boot.sources.find(s => s.role === 'reference');

  const rt = await call(client, 'git_document_get', { source_id: runtimeSource.source_id });
  results.runtime = { path: rt.path, commitSHA: rt.commit_sha, title: rt.content.split('\n')[0], hasNext: !!rt.next_cursor,
    sha256Matches: createHash('sha256').update(rt.content, 'utf8').digest('hex') === rt.sha256 };

  // The whole guide, fragment by fragment.
  const parts = [];
  let page = await call(client, 'git_document_get', { source_id: guideSource.source_id });
  const sha256 = page.sha256;
  const total = page.range.total_bytes;
  for (;;) {
    parts.push({ content: page.content, start: page.range.start_byte, end: page.range.end_byte,
      fragmentOK: createHash('sha256').update(page.content, 'utf8').digest('hex') === page.fragment_sha256 });
    if (!page.next_cursor) break;
    page = await call(client, 'git_document_get', { source_id: guideSource.source_id, cursor: page.next_cursor });
  }
  const whole = parts.map(p => p.content).join('');
  results.guide = { fragments: parts.length, totalBytes: total, bytes: Buffer.byteLength(whole, 'utf8'),
    contiguous: parts.every((p, i) => i === 0 ? p.start === 0 : p.start === parts[i - 1].end),
    fragmentsOK: parts.every(p => p.fragmentOK),
    sha256Matches: createHash('sha256').update(whole, 'utf8').digest('hex') === sha256,
    nonASCII: /[^\x00-\x7f]/.test(whole) };

  const task = await call(client, 'task_create', { title: 'Try the demo' });
  const wf = await call(client, 'workflow_dispatch', { task_id: task.task_id ?? task.id, profile: 'engineer', mode: 'worker' });
  results.workflow = { hasID: !!wf.workflow_id, view: wf.view,
    layers: wf.layers.map(l => ({ name: l.name, provenance: l.provenance ?? null, commitSHA: l.commit_sha ?? null })),
    mentionsEngineerFile: (wf.instructions ?? '').includes('Engineer instructions (demo)'),
    mentionsCoreFile: (wf.instructions ?? '').includes('Core instructions (demo)'),
    warnings: (wf.warnings ?? []).map(w => w.code) };
  await client.close();
}

await report(main, results);
