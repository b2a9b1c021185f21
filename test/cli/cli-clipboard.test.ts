// OSC 52 and `pty-ws attach`: a program in the session sets the clipboard only with --clipboard.
// The filter on its own, at every chunk boundary; then the real CLI in a real terminal (a private
// tmux server with set-clipboard on, which turns an OSC 52 it receives into a paste buffer)
// against the real server, with another participant's program printing the sequence.
import { describe, expect, it } from 'vitest';
import { ClipboardFilter } from '../../src/adapter/node/cli/clipboard-filter.ts';
import { nodeWebSocket } from '../../src/adapter/node/ws-client.ts';
import { PtyClient } from '../../src/client/pty-client.ts';
import { cliFixture, PTY_WS } from '../helpers/cli-fixture.ts';


const cli = cliFixture();

/** `text` through a fresh filter, cut at `cuts`. */
function filtered(text: string, cuts: number[]): { out: string; dropped: boolean } {
  const f = new ClipboardFilter();
  const bytes = Buffer.from(text, 'utf8');
  let out = '';
  let dropped = false;
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    const r = f.feed(bytes.subarray(from, at));
    out += r.out.toString('latin1');
    dropped ||= r.dropped;
    from = at;
  }
  return { out: Buffer.from(out, 'latin1').toString('utf8'), dropped };
}

describe('the CLI keeps OSC 52 from the local terminal', { timeout: 90_000 }, () => {
  it('takes out OSC 52 ended by BEL, ST, CAN or a new sequence, wherever a chunk ends; other OSCs and text pass', () => {
    const cases: Array<[string, string]> = [
      ['a\x1b]52;c;aGk=\x07b', 'ab'],
      ['a\x1b]52;c;aGk=\x1b\\b', 'ab'],
      ['a\x1b]52;c;aGk=\x18b', 'ab'],
      ['a\x1b]52;c;aGk=\x1b[1mb', 'a\x1b[1mb'],
      ['é\x1b]0;title\x07\x1b]5;x\x07\x1b]520;y\x07ü', 'é\x1b]0;title\x07\x1b]5;x\x07\x1b]520;y\x07ü'],
      // An ESC at the end may start one: it waits for the next chunk.
      ['\x1b]52;c;?\x07\x1b]52;p;aGk=\x07end\x1b', 'end'],
    ];
    for (const [input, want] of cases) {
      const len = Buffer.byteLength(input);
      for (let i = 0; i <= len; i++) {
        for (let j = i; j <= len; j++) {
          const r = filtered(input, [i, j]);
          expect(r.out, `${JSON.stringify(input)} cut at ${i}, ${j}`).toBe(want);
        }
      }
      expect(filtered(input, []).dropped).toBe(input.includes('\x1b]52;'));
    }
  });

  it('attach drops an OSC 52 from the session and says so; --clipboard passes it to the terminal', async () => {
    const server = await cli.server();
    const id = server.defaultSession!.id;
    const other = new PtyClient({ url: server.attachUrl(id), token: server.devToken, role: 'controller', label: 'other', webSocket: nodeWebSocket() });
    cli.track(other);
    await other.connect();
    const osc52 = (text: string, mark: string) => other.send(`printf '\\033]52;c;%s\\007%s-%s\\n' $(printf '${text}' | base64) ${mark} done\r`);

    for (const allow of [false, true]) {
      const tmux = await cli.terminal(`${PTY_WS} attach ${id} --url ${server.origin}${allow ? ' --clipboard' : ''}; sleep 30`, { env: { PTY_WS_TOKEN: server.devToken! }, cols: 120, rows: 24 });
      await tmux.setOption('set-clipboard', 'on');
      await tmux.waitFor(/attached to session/);
      const mark = allow ? 'allowed' : 'kept';
      osc52(`from ${mark}`, mark);
      await tmux.waitFor(new RegExp(`^${mark}-done`, 'm'));
      if (allow) await expect.poll(() => tmux.buffers()).toEqual([`from ${mark}`]);
      else {
        await tmux.waitFor(/tried to set your clipboard \(OSC 52\): not passed on · attach --clipboard allows it/);
        expect(await tmux.buffers()).toEqual([]);
      }
      await tmux.kill();
    }
  });
});
