// File transfer (issue 21, routes/files.ts): upload into a session's working directory and download
// from it over REST with pty:control, against the real router and a real directory; the page's
// Upload and Download buttons in headless Chromium.
import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitForText } from '../helpers/browser.ts';
import type { TestServer } from '../helpers/server.ts';
import { pageFixture } from '../helpers/page-fixture.ts';

const live = pageFixture();

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

async function call(s: TestServer, method: string, path: string, token: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${s.origin}/agents/local/sessions${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

describe('file transfer', { timeout: 90_000 }, () => {
  it('uploads into the working directory and downloads from it, never replacing, never through a symlink, pty:control only', async () => {
    const server = await live.server();
    const token = server.devToken!;
    const work = join(server.dir, 'work');
    mkdirSync(work);
    const { session_id: id } = await server.createSession({ cwd: work, label: 'files' });

    const up = await call(server, 'POST', `/${id}/files`, token, { name: 'hello.txt', content_base64: b64('hi there\n') });
    expect(up.status, await up.clone().text()).toBe(201);
    expect(await up.json()).toEqual({ name: 'hello.txt', directory: work, bytes: 9 });
    expect(readFileSync(join(work, 'hello.txt'), 'utf8')).toBe('hi there\n');
    expect(lstatSync(join(work, 'hello.txt')).mode & 0o777).toBe(0o600);

    const again = await call(server, 'POST', `/${id}/files`, token, { name: 'hello.txt', content_base64: b64('other') });
    expect(again.status).toBe(409);
    expect(readFileSync(join(work, 'hello.txt'), 'utf8')).toBe('hi there\n');
    for (const name of ['../escape.txt', 'sub/x', '..', '']) {
      expect((await call(server, 'POST', `/${id}/files`, token, { name, content_base64: b64('x') })).status, name).toBe(400);
    }

    const down = await call(server, 'GET', `/${id}/files/hello.txt`, token);
    expect(down.status).toBe(200);
    expect(down.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''hello.txt");
    expect(Buffer.from(await down.arrayBuffer()).toString()).toBe('hi there\n');
    expect((await call(server, 'GET', `/${id}/files/missing.txt`, token)).status).toBe(404);

    // A symlink at the name is neither read through nor written through.
    writeFileSync(join(server.dir, 'secret.txt'), 'secret');
    symlinkSync(join(server.dir, 'secret.txt'), join(work, 'link.txt'));
    const viaLink = await call(server, 'GET', `/${id}/files/link.txt`, token);
    expect(viaLink.status).toBe(403);
    expect(await viaLink.text()).not.toContain('secret');
    expect((await call(server, 'POST', `/${id}/files`, token, { name: 'link.txt', content_base64: b64('overwritten') })).status).toBe(409);
    expect(readFileSync(join(server.dir, 'secret.txt'), 'utf8')).toBe('secret');
    expect((await call(server, 'GET', `/${id}/files/..%2Fsecret.txt`, token)).status).toBe(400);

    // Too large: refused before anything is written.
    const big = await call(server, 'POST', `/${id}/files`, token, { name: 'big.bin', content_base64: Buffer.alloc(9 * 1024 * 1024).toString('base64') });
    expect(big.status).toBe(413);
    expect(() => lstatSync(join(work, 'big.bin'))).toThrow(/ENOENT/);
    // Sent without a length, it is refused as it passes the limit, not read whole first: a body
    // that never ends gets its 413 (or, still sending, the socket closed) within seconds.
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      start: (ctl) => ctl.enqueue(new TextEncoder().encode('{"name":"endless.bin","content_base64":"')),
      // A turn between chunks: the server runs in this process and must get its turns too.
      pull: async (ctl) => {
        await new Promise((r) => setImmediate(r));
        pulled += 64 * 1024;
        ctl.enqueue(new Uint8Array(64 * 1024).fill(0x41));
      },
    });
    const sent = fetch(`${server.origin}/agents/local/sessions/${id}/files`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: endless, duplex: 'half' } as RequestInit);
    const answer = await Promise.race([
      sent.then((r) => String(r.status), (e: unknown) => ((e as { cause?: { code?: string } }).cause?.code === 'UND_ERR_SOCKET' ? 'closed' : Promise.reject(e))),
      new Promise((r) => setTimeout(() => r('still reading'), 10_000)),
    ]);
    await endless.cancel().catch(() => undefined);
    expect(answer).toMatch(/^(413|closed)$/);
    expect(pulled).toBeLessThan(64 * 1024 * 1024);

    // A watch share (pty:observe) may do neither.
    const minted = (await (await call(server, 'POST', `/${id}/shares`, token, { scope: 'pty:observe' })).json()) as { token: string };
    expect((await call(server, 'GET', `/${id}/files/hello.txt`, minted.token)).status).toBe(403);
    expect((await call(server, 'POST', `/${id}/files`, minted.token, { name: 'guest.txt', content_base64: b64('x') })).status).toBe(403);
  });

  it("the page's Upload and Download buttons", async () => {
    const server = await live.server();
    const work = join(server.dir, 'work');
    mkdirSync(work);
    writeFileSync(join(work, 'report.txt'), 'from the session\n');
    const { session_id: id } = await server.createSession({ cwd: work });
    const browser = await live.browser();
    const page = await browser.context.newPage();
    await page.goto(`${server.origin}/#token=${server.devToken}&session=${id}&label=me`);
    await waitForText(page, '#status', /^live$/);

    await page.locator('#upload-input').setInputFiles({ name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# uploaded from the page\n') });
    await waitForText(page, '#notice', /Uploaded notes\.md \(25 bytes\)/);
    expect(readFileSync(join(work, 'notes.md'), 'utf8')).toBe('# uploaded from the page\n');

    page.once('dialog', (d) => void d.accept('report.txt'));
    const download = page.waitForEvent('download');
    await page.locator('#download').click();
    const saved = await download;
    expect(saved.suggestedFilename()).toBe('report.txt');
    expect(readFileSync((await saved.path())!, 'utf8')).toBe('from the session\n');
  });
});
