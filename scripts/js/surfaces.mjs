// surfaces.mjs: what a client shows of HeyAira beside its tools, through
// any SDK client with the v1/v2 method names: the resources (listed, one
// read whole, one large read's first fragment) and the prompts (listed, one
// assembled). cfg names the two sources: {sourceID, largeID}.

import { createHash } from 'node:crypto';

const sha = (s) => createHash('sha256').update(s, 'utf8').digest('hex');

export async function surfaces(client, cfg) {
  const list = await client.listResources();
  const whole = (await client.readResource({ uri: `heyaira://sources/${cfg.sourceID}` })).contents;
  const large = (await client.readResource({ uri: `heyaira://sources/${cfg.largeID}` })).contents;
  const templates = await client.listResourceTemplates();
  const prompts = await client.listPrompts();
  const prompt = await client.getPrompt({ name: 'engineer', arguments: { mode: 'worker' } });
  return {
    uris: list.resources.map((r) => r.uri).sort(),
    titled: list.resources.every((r) => r.title && r.mimeType),
    template: templates.resourceTemplates.map((t) => t.uriTemplate),
    whole: { count: whole.length, mimeType: whole[0].mimeType, sha256: sha(whole[0].text), fileSHA256: whole[0]._meta?.['io.heyaira/sha256'] },
    large: { count: large.length, bytes: Buffer.byteLength(large[0].text, 'utf8'), fileSHA256: large[0]._meta?.['io.heyaira/sha256'],
      hasCursor: typeof large[0]._meta?.['io.heyaira/next_cursor'] === 'string', note: large[1]?.text?.includes('git_document_get') },
    prompts: prompts.prompts.map((p) => p.name),
    prompt: { role: prompt.messages[0].role, hasText: prompt.messages[0].content.text.length > 0,
      layers: prompt._meta?.['io.heyaira/layers']?.length ?? 0 },
  };
}
