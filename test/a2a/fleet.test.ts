// A fleet end to end (issue 22, docs/deployment.md): a real libSQL server (sqld), three `pty-ws
// serve` processes started at the same moment on it, and nginx from Debian in front, configured by
// `pty-ws nginx-config` — all on loopback. Sessions on each instance are reached through the front
// door by instance path (REST, the WebSocket attach with a header bearer and with a subprotocol
// bearer, A2A SendMessage, the web page's instance picker), the fleet is listed from every
// instance, one instance is SIGKILLed (the others carry on, its sessions turn unreachable once its
// heartbeat is stale) and restarted (it re-adopts its session and beats again), another is
// stopped cleanly (unreachable at once).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetSessionList, InstanceList } from '../../src/protocol/fleet-info.ts';
import { SessionList } from '../../src/protocol/session-info.ts';
import { PTY_WS_VERSION } from '../../src/core/version.ts';
import { TaskState, type Task } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { a2aClient, collect, get, list, rejection, send, stateName, textOf, TRANSPORTS, untilState, userText } from '../helpers/a2a.ts';
import { launchChromium, screenshot, screenText, typeInto, waitForText } from '../helpers/browser.ts';
import { TestClient } from '../helpers/client.ts';
import { endOrphans } from '../helpers/leftovers.ts';
import { freePort, runCli, until, type Child } from '../helpers/processes.ts';
import { startSqld, type Sqld } from '../helpers/sqld.ts';
import { signJwt } from '../helpers/tokens.ts';

const IDS = ['alpha', 'beta', 'gamma'] as const;
type Id = (typeof IDS)[number];
/** Stale after 3 of them (HEARTBEAT_MISSES): long enough that a loaded machine does not miss three. */
const HEARTBEAT_MS = 1000;
const NGINX = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
const SECRET = 'fleet-test-secret-0123456789abcdef0123456789';

interface Instance {
  id: Id;
  dir: string;
  child: Child;
  origin: string;
  port: number;
}

let root: string;
let sqld: Sqld;
let token: string;
let frontDoor: string;
let nginx: ChildProcess | undefined;
const instances = new Map<Id, Instance>();
const children: Child[] = [];
const clients: TestClient[] = [];
const sessions = new Map<Id, string>();

const env = (): Record<string, string> => ({
  PTY_WS_DATABASE_URL: sqld.httpUrl,
  PTY_WS_DATABASE_AUTH_TOKEN: sqld.authToken,
  // One issuer for the fleet: a bearer is good at every instance.
  PTY_WS_JWT_SECRET: SECRET,
  PTY_WS_PUBLIC_URL: frontDoor,
  PTY_WS_HEARTBEAT_MS: String(HEARTBEAT_MS),
  PTY_WS_LOG_LEVEL: 'warn',
});

/** `pty-ws serve` for the instance, up once its banner names the URL it listens on. */
async function serve(id: Id, dir: string, port = 0): Promise<Instance> {
  const child = runCli(['serve', '--port', String(port), '--state-dir', dir, '--instance-id', id], env());
  children.push(child);
  const origin = await until(() => /listening on (http:\/\/\S+)/.exec(child.stdout())?.[1] ?? (child.proc.exitCode !== null ? 'exited' : undefined), `${id}'s banner`, 60_000);
  if (origin === 'exited') throw new Error(`${id} exited: ${child.stderr()}`);
  const inst = { id, dir, child, origin, port: Number(new URL(origin).port) };
  instances.set(id, inst);
  return inst;
}

const bearer = () => ({ authorization: `Bearer ${token}` });
async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url, { headers: bearer() });
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

// Parsed with the schemas the routes are typed by: a field missing or mistyped fails here.
const fleetSessions = async (origin: string) => v.parse(FleetSessionList, await getJson(`${origin}/sessions`)).sessions;
const fleetInstances = async (origin: string) => v.parse(InstanceList, await getJson(`${origin}/instances`)).instances;

async function attach(url: string, how: 'header' | 'subprotocol'): Promise<TestClient> {
  const c =
    how === 'header'
      ? await TestClient.connect(url, { token })
      : await TestClient.connect(url, { token: null, protocols: ['pty-ws.v1', `bearer.${Buffer.from(token).toString('base64url')}`] });
  clients.push(c);
  await c.join({ role: 'controller' });
  return c;
}

const type = (c: TestClient, text: string) => c.send('pty.session_input', { data: Buffer.from(text).toString('base64') });

/** A JSON-RPC call at an endpoint: its HTTP answer, not yet read. */
const post = (url: string, method: string, params: Record<string, unknown>) =>
  fetch(url, { method: 'POST', headers: { ...bearer(), 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });

async function rpc(id: Id, method: string, params: Record<string, unknown>, url = `${frontDoor}/agents/${id}/a2a/jsonrpc`): Promise<Record<string, unknown>> {
  const res = await post(url, method, params);
  const body = (await res.json()) as { result?: Record<string, unknown>; error?: unknown };
  if (!body.result) throw new Error(`${method} at ${id}: HTTP ${res.status} ${JSON.stringify(body.error)}`);
  return body.result;
}

/** The fleet agent's JSON-RPC endpoint served by one particular instance (not through the front door). */
const fleetAt = (id: Id) => `${instances.get(id)!.origin}/fleet/a2a/jsonrpc`;
const ownerOf = (t: Task) => (t.metadata as Record<string, unknown> | undefined)?.instance_id;
const fleetTasks = new Map<Id, string>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'pty-ws-fleet-'));
  sqld = await startSqld(root);
  token = await signJwt({ sub: 'fleet-operator', scope: 'pty:control' }, new TextEncoder().encode(SECRET));
  frontDoor = `http://127.0.0.1:${await freePort()}`;
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await Promise.all(children.map((c) => c.stop()));
  if (nginx && nginx.exitCode === null) {
    const exited = new Promise((r) => nginx!.once('exit', r));
    nginx.kill('SIGTERM');
    await exited;
  }
  await sqld?.stop();
  // The SIGKILLed router's PTY host outlives it by design; the restarted router did not start it.
  await endOrphans(root);
  rmSync(root, { recursive: true, force: true });
}, 60_000);

describe('a fleet: sqld, three instances, nginx', () => {
  it('three instances started at the same moment on a new database all come up, migrated once, registered', async () => {
    // Meanwhile, as it needs no instance: the generator refuses what nginx could not route.
    const refused = runCli(['nginx-config', '--listen', '8080', 'bad/id=127.0.0.1:1'], {});
    const started = await Promise.all(IDS.map((id) => serve(id, join(root, id))));
    for (const i of started) expect((await fetch(`${i.origin}/readyz`)).status).toBe(200);

    const db = createClient({ url: sqld.httpUrl, authToken: sqld.authToken });
    const journal = JSON.parse(readFileSync(new URL('../../storage/migrations/meta/_journal.json', import.meta.url), 'utf8')) as { entries: Array<{ tag: string }> };
    expect(journal.entries.map((e) => e.tag)).toContain('0005_instances');
    // Every migration applied exactly once, whichever router won the race.
    expect(Number((await db.execute('select count(*) as n from __drizzle_migrations')).rows[0]!.n)).toBe(journal.entries.length);
    db.close();

    const listed = await fleetInstances(started[0]!.origin);
    expect(listed.map((i) => i.instance_id)).toEqual([...IDS]);
    for (const i of listed) expect(i).toMatchObject({ base_url: frontDoor, version: PTY_WS_VERSION, reachable: true });
    // The version an instance reports is the package's.
    expect(PTY_WS_VERSION).toBe((JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version);

    // The front door, generated for these three by `pty-ws nginx-config`.
    const prefix = join(root, 'nginx');
    mkdirSync(prefix);
    const user = process.getuid?.() === 0 ? ['--user', 'root'] : [];
    const generate = runCli(['nginx-config', '--standalone', '--prefix', prefix, ...user, '--listen', new URL(frontDoor).host, ...started.map((i) => `${i.id}=127.0.0.1:${i.port}`)], {});
    expect(await generate.exited).toBe(0);
    expect(await refused.exited).toBe(2);
    expect(refused.stderr()).toContain('instance id "bad/id"');
    writeFileSync(join(prefix, 'nginx.conf'), generate.stdout());
    let nginxErr = '';
    nginx = spawn(NGINX, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-e', join(prefix, 'error.log'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    nginx.stderr!.on('data', (d: Buffer) => (nginxErr += d.toString()));
    await until(async () => (nginx!.exitCode !== null ? 'exited' : (await fetch(`${frontDoor}/healthz`).catch(() => null))?.ok), 'nginx to answer', 15_000).then((r) => {
      if (r === 'exited') throw new Error(`nginx exited: ${nginxErr}`);
    });
  }, 120_000);

  it('creates a session on each instance through the front door, by instance path', async () => {
    for (const id of IDS) {
      const res = await fetch(`${frontDoor}/agents/${id}/sessions`, {
        method: 'POST',
        headers: { ...bearer(), 'content-type': 'application/json' },
        body: JSON.stringify({ label: `on-${id}` }),
      });
      expect(res.status).toBe(201);
      const s = (await res.json()) as { session_id: string; instance_id: string; attach_url: string };
      expect(s.instance_id).toBe(id);
      expect(s.attach_url).toBe(`${frontDoor.replace(/^http/, 'ws')}/agents/${id}/sessions/${s.session_id}/attach`);
      sessions.set(id, s.session_id);
    }
    // The AgentCard names the front door.
    const card = (await (await fetch(`${instances.get('beta')!.origin}/.well-known/agent-card.json`)).json()) as { supportedInterfaces: Array<{ url: string }> };
    expect(card.supportedInterfaces[0]!.url).toBe(`${frontDoor}/agents/beta/a2a/jsonrpc`);
  }, 30_000);

  it('lists the whole fleet from every instance and from the front door, each session with its owner', async () => {
    for (const origin of [...[...instances.values()].map((i) => i.origin), frontDoor]) {
      const list = await fleetSessions(origin);
      for (const id of IDS) {
        const s = list.find((x) => x.session_id === sessions.get(id));
        expect(s, `${id}'s session listed at ${origin}`).toMatchObject({ instance_id: id, reachable: true, attach_url: `${frontDoor.replace(/^http/, 'ws')}/agents/${id}/sessions/${sessions.get(id)}/attach` });
      }
    }
    // The per-instance listing is unchanged: only that instance's sessions.
    const own = v.parse(SessionList, await getJson(`${frontDoor}/agents/alpha/sessions`));
    expect(new Set(own.sessions.map((s) => s.instance_id))).toEqual(new Set(['alpha']));
    // Without a bearer: refused; without a pty scope: forbidden.
    expect((await fetch(`${frontDoor}/sessions`)).status).toBe(401);
    const key = new TextEncoder().encode(SECRET);
    const noScope = await signJwt({ sub: 'stranger', scope: 'email' }, key);
    for (const path of ['/sessions', '/instances']) expect((await fetch(`${frontDoor}${path}`, { headers: { authorization: `Bearer ${noScope}` } })).status).toBe(403);
    // A bearer restricted to one session sees that one, from any instance.
    const one = await signJwt({ sub: 'watcher', scope: 'pty:observe', sessions: [sessions.get('alpha')!] }, key);
    const seen = v.parse(FleetSessionList, await (await fetch(`${instances.get('gamma')!.origin}/sessions`, { headers: { authorization: `Bearer ${one}` } })).json());
    expect(seen.sessions.map((s) => s.session_id)).toEqual([sessions.get('alpha')]);

    const cli = runCli(['sessions', 'list', '--all', '--url', frontDoor, '--token', token], {});
    expect(await cli.exited).toBe(0);
    for (const id of IDS) expect(cli.stdout()).toMatch(new RegExp(`${id}\\s+yes\\s+${sessions.get(id)}`));
  }, 60_000);

  it('attaches over WebSocket through the front door (header and subprotocol bearer) and runs an A2A SendMessage there', async () => {
    const list = await fleetSessions(frontDoor);
    const urlOf = (id: Id) => list.find((s) => s.session_id === sessions.get(id))!.attach_url;
    const a = await attach(urlOf('alpha'), 'header');
    type(a, 'echo via-door-$((20+1))\r');
    await a.waitForOutput('via-door-21', 15_000);
    const g = await attach(urlOf('gamma'), 'subprotocol');
    // A mark in gamma's shell, to tell its re-adopted shell from a new one after the restart.
    type(g, 'export FLEET_MARK=kept; echo marked-$((3*3))\r');
    await g.waitForOutput('marked-9', 15_000);

    const task = await rpc('beta', 'SendMessage', { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', contextId: sessions.get('beta'), parts: [{ text: 'echo a2a-$((6*7))' }] } });
    const taskId = ((task.task as { id?: string } | undefined) ?? (task as { id?: string })).id!;
    const done = await until(
      async () => {
        const t = await rpc('beta', 'GetTask', { id: taskId });
        return (t.status as { state?: string }).state === 'TASK_STATE_COMPLETED' ? t : undefined;
      },
      'the task to complete',
      20_000,
    );
    expect(JSON.stringify(done.artifacts)).toContain('a2a-42');
  }, 60_000);

  it('the fleet agent (its AgentCard at the front door): ListTasks spans the instances the bearer may see; GetTask, SendMessage, CancelTask and streams reach the owner', async () => {
    const card = (await (await fetch(`${frontDoor}/fleet/.well-known/agent-card.json`)).json()) as { name: string; supportedInterfaces: Array<{ url: string }> };
    expect(card.name).toBe('pty-ws fleet');
    expect(card.supportedInterfaces.map((i) => i.url)).toEqual([`${frontDoor}/fleet/a2a/jsonrpc`, `${frontDoor}/fleet/a2a/rest`]);
    const fleet = await a2aClient(`${frontDoor}/fleet/`, token, 'JSONRPC');

    // A command in each instance's session, sent to the fleet agent (whichever instance nginx picks): it runs on the owner.
    for (const id of IDS) {
      const task = await fleet.sendMessage(send({ message: userText(`echo fleet-${id}-$((2*3))`, { contextId: sessions.get(id) }) }));
      if (!('status' in task)) throw new Error('expected a task');
      expect(stateName(task.status?.state)).toBe('TASK_STATE_COMPLETED');
      expect(textOf(task)).toContain(`fleet-${id}-6`);
      fleetTasks.set(id, task.id);
      // GetTask of it, from the database, names its owner.
      const got = await fleet.getTask(get(task.id));
      expect([got.contextId, ownerOf(got)]).toEqual([sessions.get(id), id]);
    }
    // Not through nginx's choice: alpha's fleet agent forwards a message for gamma's session to gamma.
    const forwarded = (await rpc('alpha', 'SendMessage', { message: userText('echo forwarded-$FLEET_MARK', { contextId: sessions.get('gamma') }) }, fleetAt('alpha'))).task as { id: string; artifacts: unknown };
    expect(JSON.stringify(forwarded.artifacts)).toContain('forwarded-kept');

    // ListTasks over both transports: every instance's tasks, each naming its owner; pages chain without overlap.
    for (const transport of TRANSPORTS) {
      const client = await a2aClient(`${frontDoor}/fleet/`, token, transport);
      const all = await client.listTasks(list({ pageSize: 100 }));
      for (const id of IDS) expect(ownerOf(all.tasks.find((t) => t.id === fleetTasks.get(id))!), `${id}'s task over ${transport}`).toBe(id);
      expect(all.tasks.find((t) => t.id === forwarded.id)?.metadata).toMatchObject({ instance_id: 'gamma' });
      const seen: string[] = [];
      let token_ = '';
      do {
        const page = await client.listTasks(list({ pageSize: 2, ...(token_ ? { pageToken: token_ } : {}) }));
        expect(page.totalSize).toBe(all.totalSize);
        seen.push(...page.tasks.map((t) => t.id));
        token_ = page.nextPageToken;
      } while (token_);
      expect(seen).toEqual(all.tasks.map((t) => t.id));
    }

    // A bearer restricted to alpha's session sees its tasks only, wherever it asks; the others are not found.
    const key = new TextEncoder().encode(SECRET);
    const watcher = await a2aClient(`${frontDoor}/fleet/`, await signJwt({ sub: 'watcher', scope: 'pty:observe', sessions: [sessions.get('alpha')!] }, key), 'JSONRPC');
    const visible = await watcher.listTasks(list({ pageSize: 100 }));
    expect(visible.tasks.length).toBeGreaterThan(0);
    expect(new Set(visible.tasks.map((t) => t.contextId))).toEqual(new Set([sessions.get('alpha')]));
    expect(visible.totalSize).toBe(visible.tasks.length);
    expect(await rejection(watcher.getTask(get(fleetTasks.get('beta')!)))).toBeInstanceOf(TaskNotFoundError);
    // Observing is not controlling: no message, no cancel, wherever the task is.
    expect((await rejection(watcher.sendMessage(send({ message: userText('true', { contextId: sessions.get('alpha') }) })))).message).toMatch(/pty:control/);

    // CancelTask of a running task of beta's, through the fleet agent.
    const sleeping = await fleet.sendMessage(send({ message: userText('sleep 60', { contextId: sessions.get('beta') }), configuration: { returnImmediately: true } }));
    if (!('status' in sleeping)) throw new Error('expected a task');
    await untilState(fleet, sleeping.id, TaskState.TASK_STATE_WORKING, 20_000);
    const canceled = await fleet.cancelTask({ tenant: '', id: sleeping.id, metadata: undefined });
    expect(stateName(canceled.status?.state)).toBe('TASK_STATE_CANCELED');

    // Streams come through as they are: a streamed command on gamma, and a subscription to one on alpha.
    const streamed = await collect(fleet.sendMessageStream(send({ message: userText('echo streamed-$((40+2))', { contextId: sessions.get('gamma') }) })));
    expect(JSON.stringify(streamed.map((e) => e.payload))).toContain('streamed-42');
    const last = streamed.at(-1)?.payload;
    expect(last?.$case === 'statusUpdate' && stateName(last.value.status?.state)).toBe('TASK_STATE_COMPLETED');
    const later = await fleet.sendMessage(send({ message: userText('sleep 2; echo subscribed-$((3+4))', { contextId: sessions.get('alpha') }), configuration: { returnImmediately: true } }));
    if (!('status' in later)) throw new Error('expected a task');
    await untilState(fleet, later.id, TaskState.TASK_STATE_WORKING, 20_000);
    const followed = await collect(fleet.resubscribeTask({ tenant: '', id: later.id }));
    expect(JSON.stringify(followed.map((e) => e.payload))).toContain('subscribed-7');
  }, 120_000);

  it('the web page behind the front door offers the instances and switches between them', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(String(e)));
      await page.goto(`${frontDoor}/#instance=beta&token=${token}`);
      await waitForText(page, '#instance-name', /^instance beta$/);
      await page.waitForSelector(`#session-list li[data-session-id="${sessions.get('beta')}"]`);
      await page.waitForSelector('#instance-select:not([hidden])');
      expect(await page.locator('#instance-select option').allTextContents()).toEqual([...IDS]);
      expect(await page.locator('#instance-select').inputValue()).toBe('beta');

      await page.selectOption('#instance-select', 'alpha');
      await waitForText(page, '#instance-name', /^instance alpha$/);
      const row = page.locator(`#session-list li[data-session-id="${sessions.get('alpha')}"]`);
      await row.waitFor();
      expect(await page.locator(`#session-list li[data-session-id="${sessions.get('beta')}"]`).count()).toBe(0);
      await row.locator('a.attach').click();
      await waitForText(page, '#status', /^live$/);
      await typeInto(page, 'echo web-$((4*4))');
      await waitForText(page, '#terminal .xterm-rows', /web-16/);
      expect(await screenText(page)).toContain('via-door-21');
      await screenshot(page, 'fleet-web-instances.png');
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('SIGKILL of one instance: the others carry on; its sessions turn unreachable once its heartbeat is stale', async () => {
    const gamma = instances.get('gamma')!;
    gamma.child.proc.kill('SIGKILL');
    await gamma.child.exited;
    const killedAt = Date.now();

    const alpha = instances.get('alpha')!.origin;
    const stale = await until(async () => {
      const list = await fleetSessions(alpha);
      return list.find((s) => s.session_id === sessions.get('gamma'))?.reachable === false ? list : undefined;
    }, "gamma's session unreachable", 15_000);
    // Not before three of its heartbeat intervals could have passed without a beat.
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(HEARTBEAT_MS);
    for (const id of ['alpha', 'beta'] as const) expect(stale.find((s) => s.session_id === sessions.get(id))?.reachable).toBe(true);
    const listed = await fleetInstances(alpha);
    expect(Object.fromEntries(listed.map((i) => [i.instance_id, i.reachable]))).toEqual({ alpha: true, beta: true, gamma: false });

    // The front door still answers fleet reads (from a live instance) and serves the others.
    expect((await fleetSessions(frontDoor)).find((s) => s.session_id === sessions.get('gamma'))?.reachable).toBe(false);
    const b = await attach(stale.find((s) => s.session_id === sessions.get('beta'))!.attach_url, 'header');
    type(b, 'echo still-$((1+1))\r');
    await b.waitForOutput('still-2', 15_000);
    // gamma's path has no one behind it now.
    expect((await fetch(`${frontDoor}/agents/gamma/sessions`, { headers: bearer() })).status).toBe(502);

    // The fleet agent still reads gamma's tasks from the database; what needs gamma's terminal names it.
    const fleet = await a2aClient(`${frontDoor}/fleet/`, token, 'JSONRPC');
    expect(ownerOf(await fleet.getTask(get(fleetTasks.get('gamma')!)))).toBe('gamma');
    const refused = await rejection(fleet.sendMessage(send({ message: userText('echo nobody', { contextId: sessions.get('gamma') }) })));
    expect(refused.message).toMatch(/instance gamma owns this terminal but does not answer/);
    const direct = (await (await post(fleetAt('beta'), 'SendStreamingMessage', { message: userText('echo nobody', { contextId: sessions.get('gamma') }) })).json()) as { error: { code: number; message: string; data: Array<{ metadata: Record<string, string> }> } };
    expect(direct.error).toMatchObject({ code: -32603, data: [{ metadata: { instance_id: 'gamma' } }] });
  }, 60_000);

  it('a restarted instance re-adopts its session and heartbeats again', async () => {
    const before = (await fleetInstances(instances.get('alpha')!.origin)).find((i) => i.instance_id === 'gamma')!;
    const gamma = instances.get('gamma')!;
    // The same state directory (its lock proves the dead holder gone) and port (nginx's upstream).
    await serve('gamma', gamma.dir, gamma.port);
    const after = await until(async () => (await fleetInstances(instances.get('beta')!.origin)).find((i) => i.instance_id === 'gamma' && i.reachable), 'gamma reachable again', 15_000);
    expect(Date.parse(after.started_at)).toBeGreaterThan(Date.parse(before.started_at));
    // It keeps beating: still reachable after more than three intervals.
    await new Promise((r) => setTimeout(r, HEARTBEAT_MS * 4));
    const later = (await fleetInstances(frontDoor)).find((i) => i.instance_id === 'gamma')!;
    expect(later.reachable).toBe(true);
    expect(Date.parse(later.last_seen_at)).toBeGreaterThan(Date.parse(after.last_seen_at));

    const s = (await fleetSessions(frontDoor)).find((x) => x.session_id === sessions.get('gamma'))!;
    expect(s).toMatchObject({ reachable: true, state: 'running' });
    const g = await attach(s.attach_url, 'header');
    type(g, 'echo mark-$FLEET_MARK-$((5*5))\r');
    await g.waitForOutput('mark-kept-25', 15_000);
  }, 90_000);

  it('a clean stop reads unreachable at once, without waiting for the heartbeat to go stale', async () => {
    await instances.get('beta')!.child.stop();
    const listed = await fleetInstances(instances.get('alpha')!.origin);
    expect(Object.fromEntries(listed.map((i) => [i.instance_id, i.reachable]))).toEqual({ alpha: true, beta: false, gamma: true });
  }, 30_000);
});
