// One attached session in the page: an xterm.js terminal driven by a PtyClient in binary mode.
// The terminal always has the session's size (from Keyframes and Resize frames); a controller asks
// for the size that fits its window, an observer only watches (its keys are never sent).
import { FitAddon } from '@xterm/addon-fit';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { Terminal } from '@xterm/xterm';
import { PtyClient } from '../client/pty-client.ts';
import { RestError, type SessionsApi } from '../client/sessions-api.ts';
import { shareLinkEnded } from '../client/share-link.ts';
import type { ConnectionState, Geometry, Role } from '../client/types.ts';
import { globalWebSocket } from '../client/websocket.ts';
import { show } from './dom.ts';
import { renderMembers } from './members.ts';
import { THEMES, type Appearance } from './preferences.ts';
import { ClipboardConsent, type ConsentUi } from './clipboard-consent.ts';
import { ReplayGate } from './replay-gate.ts';
import { registerClipboard, registerWebLinks, TerminalSearch, writeClipboard } from './terminal-extras.ts';

/**
 * What the first join replays for scrollback: the last 1000 log frames, and of those only the
 * newest 1 MiB (frames as sent), so a reload after huge frames stays small and one after many small
 * frames still fills the scrollback (5000 lines). The page never asks for the whole log.
 */
const SCROLLBACK_FRAMES = 1000;
const SCROLLBACK_BYTES = 1024 * 1024;

export interface TerminalUi {
  container: HTMLElement;
  status: HTMLElement;
  role: HTMLElement;
  toggleRole: HTMLButtonElement;
  observerBanner: HTMLElement;
  endedBanner: HTMLElement;
  controllers: HTMLUListElement;
  observers: HTMLUListElement;
  /** The question whether a program may set the clipboard (OSC 52). */
  clipboardAsk: ConsentUi;
  onError(message: string): void;
  /** Something that went wrong is fine again (the session's remote host linked again). */
  onNotice(message: string): void;
  /** The first join completed (the session's process now runs). */
  onLive(): void;
  /** The session is gone or the token no longer works (`code`: the 401's, e.g. `share.revoked`): leave this view. */
  onLost(reason: 'gone' | 'unauthorized', code?: string): void;
  /** This bearer may only observe (it asked for controller and was refused): watch instead. */
  onWatchOnly(): void;
  /** The program set the terminal's title (OSC 0/2). */
  onTitle(title: string): void;
  /** The session's size, and the size this page could show (null before the first Keyframe). */
  onSize(session: Geometry | null, fits: Geometry | null): void;
}

export interface TerminalOptions {
  api: SessionsApi;
  sessionId: string;
  token: string | null;
  observe: boolean;
  /** Absent: the server names this client (a share link's guest goes by the share's label). */
  label?: string;
  appearance: Appearance;
  /** Keyboard input on its way to the session (the key bar's sticky Ctrl). */
  transformInput?: (data: string) => string;
  /** This tab's storage (sessionStorage): the clipboard answer per session. */
  tabStorage: Storage | null;
}

export class TerminalView {
  readonly client: PtyClient;
  private readonly term: Terminal;
  private readonly fit = new FitAddon();
  private readonly resizeObserver: ResizeObserver;
  private readonly search: TerminalSearch;
  /** Replayed output and Keyframes are drawn through it: the terminal's answers to them are not sent. */
  private readonly gate: ReplayGate;
  private readonly consent: ClipboardConsent;
  private fitTimer: ReturnType<typeof setTimeout> | undefined;
  /** Whether anything was drawn yet: a repaint keeps what was as scrollback, so a reload or a rejoin loses no history. */
  private drawn = false;
  /** The share link was revoked or expired: what the page said then is the last word. */
  private linkEnded = false;

  constructor(
    private readonly opts: TerminalOptions,
    private readonly ui: TerminalUi,
  ) {
    this.term = new Terminal({
      cursorBlink: true,
      scrollback: 5000,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
      fontSize: opts.appearance.fontSize,
      disableStdin: opts.observe,
      theme: THEMES[opts.appearance.theme],
      // For `unicode.activeVersion` below.
      allowProposedApi: true,
    });
    this.term.loadAddon(this.fit);
    // Character widths as the server's emulator measures them (src/screen/screen.ts): an emoji or a
    // CJK character takes two cells, so Keyframes agree with what the page draws (docs/protocol.md §6.3).
    this.term.loadAddon(new Unicode11Addon());
    this.term.unicode.activeVersion = '11';
    registerWebLinks(this.term, (url) => void window.open(url, '_blank', 'noopener,noreferrer'));
    this.search = new TerminalSearch(this.term);
    this.gate = new ReplayGate(this.term);
    const clipboard = navigator.clipboard as Navigator['clipboard'] | undefined;
    this.consent = new ClipboardConsent(opts.tabStorage, opts.sessionId, ui.clipboardAsk, (text) => writeClipboard(clipboard, text));
    // OSC 52 parsed from a replay or a Keyframe is the past: whoever printed it is gone, nobody is
    // asked. An observer's clipboard is not another participant's to fill.
    registerClipboard(this.term, clipboard, (text) => {
      if (this.gate.open && this.client.role === 'controller') this.consent.request(text);
    });
    ui.container.replaceChildren();
    this.term.open(ui.container);
    const size = this.fit.proposeDimensions();

    this.client = new PtyClient({
      url: opts.api.attachUrl(opts.sessionId),
      token: opts.token,
      binary: true,
      role: opts.observe ? 'observer' : 'controller',
      ...(opts.label === undefined ? {} : { label: opts.label }),
      ...(size && size.cols > 0 && size.rows > 0 ? { size: { cols: size.cols, rows: size.rows } } : {}),
      scrollbackFrames: SCROLLBACK_FRAMES,
      scrollbackBytes: SCROLLBACK_BYTES,
      webSocket: globalWebSocket,
    });
    this.wire();
    this.resizeObserver = new ResizeObserver(() => {
      clearTimeout(this.fitTimer);
      this.fitTimer = setTimeout(() => {
        this.fitToWindow();
        this.reportSize();
      }, 100);
    });
    this.resizeObserver.observe(ui.container);
    ui.toggleRole.onclick = () => this.client.requestRole(this.client.role === 'controller' ? 'observer' : 'controller');
  }

  async start(): Promise<void> {
    this.setStatus('connecting');
    try {
      await this.client.connect();
      this.term.focus();
      this.ui.onLive();
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (!this.opts.observe && isObserveOnly(message)) return this.ui.onWatchOnly();
      this.ui.onError(message);
      void this.checkSession();
    }
  }

  /** Theme and font size, now (a new font size refits: a controller asks for the size that fits). */
  setAppearance(a: Appearance): void {
    this.term.options.theme = THEMES[a.theme];
    this.term.options.fontSize = a.fontSize;
    this.fitToWindow();
    this.reportSize();
  }

  /** Keys from the page (the key bar), sent like typed ones: only as a controller. */
  sendKeys(data: string): void {
    if (this.client.role === 'controller') this.client.send(data);
  }

  /** Searches the scrollback (Enter: older, Shift+Enter: newer); says where it found it. */
  find(query: string, direction: 'older' | 'newer'): string {
    return this.search.find(query, direction);
  }

  focus(): void {
    this.term.focus();
  }

  async detach(): Promise<void> {
    await this.client.leave();
    this.dispose();
  }

  dispose(): void {
    this.consent.dispose();
    this.client.close();
    this.resizeObserver.disconnect();
    clearTimeout(this.fitTimer);
    this.term.dispose();
  }

  private wire(): void {
    const { client, term } = this;
    const { gate } = this;
    client.on('output', (data, _sequence, replayed) => {
      this.drawn = true;
      gate.write(data, replayed);
    });
    client.on('keyframe', (k) => {
      if (!k.repaint) return;
      // What was drawn (the scrollback replay, or the screen before a lag) scrolls up into the
      // scrollback instead of being wiped; then a soft reset, and the snapshot on a clear screen.
      if (this.drawn) gate.write(`${term.buffer.active.type === 'alternate' ? '\x1b[?1049l' : ''}\x1b[${term.rows};1H${'\n'.repeat(term.rows)}\x1b[!p\x1b[H\x1b[2J`, true);
      else term.reset();
      this.drawn = true;
      term.resize(k.cols, k.rows);
      gate.write(k.snapshot, true);
      this.reportSize();
    });
    client.on('resize', (g) => {
      term.resize(g.cols, g.rows);
      this.reportSize();
    });
    term.onTitleChange((title) => this.ui.onTitle(title));
    client.on('role', (r) => this.showRole(r.role, r.downgraded ? (r.reason ?? 'all controller seats are taken') : undefined));
    client.on('membership', (m) => renderMembers(m, this.client.clientId, this.ui));
    client.on('state', (state, info) => {
      this.setStatus(state, info.attempt);
      if (state === 'live' && client.role === 'controller') this.fitToWindow();
      if (state === 'reconnecting' && info.attempt >= 3) void this.checkSession();
    });
    client.on('closed', (c) => {
      const how = c.reason === 'normal' ? `exited with status ${c.exitCode ?? '?'}` : `ended (${c.reason}${c.detail ? `: ${c.detail}` : ''})`;
      // instance_terminated: the server (or its PTY host) shut down and took the session with it.
      this.ui.endedBanner.textContent = c.reason === 'instance_terminated' ? `The server shut down: the session ${how}.` : `The session's process ${how}.`;
      show(this.ui.endedBanner, true);
    });
    client.on('error', (e) => {
      if (e.code === 'PTY_OUTPUT_LAGGED' || e.code === 'REPLAY_OUT_OF_RANGE') return;
      if (shareLinkEnded(e.reason)) {
        this.linkEnded = true;
        return this.ui.onLost('unauthorized', e.reason);
      }
      // Not a fault: the notice that the host_unreachable error before it no longer holds (docs/protocol.md §7.3).
      if (e.reason === 'host_linked') return this.ui.onNotice(e.message);
      if (isObserveOnly(`${e.code}: ${e.message}`)) document.body.classList.add('watch-only');
      this.ui.onError(`${e.code}: ${e.message}`);
    });
    client.on('end', (end) => {
      this.setStatus('ended');
      if (this.linkEnded) return;
      if (end.reason === 'refused' || end.reason === 'gave_up') this.ui.onError(`connection ${end.reason}: ${end.message ?? ''}`);
    });
    // Only while the gate is open: what the terminal emits as it parses the past is not input.
    term.onData((data) => {
      if (client.role === 'controller' && gate.open) client.send(this.opts.transformInput ? this.opts.transformInput(data) : data);
    });
    term.onBinary((data) => {
      if (client.role === 'controller' && gate.open) client.send(Uint8Array.from(data, (c) => c.charCodeAt(0)));
    });
  }

  /** A controller asks for the size that fits the window; the Resize that comes back resizes the terminal. */
  private fitToWindow(): void {
    if (this.client.role !== 'controller' || this.client.state !== 'live') return;
    const d = this.fit.proposeDimensions();
    if (!d || !(d.cols > 0 && d.rows > 0)) return;
    const g = this.client.geometry;
    if (!g || g.cols !== d.cols || g.rows !== d.rows) this.client.resize(d.cols, d.rows);
  }

  /** The session's size against what this page can show: a smaller page says so, rather than cutting the screen off silently. */
  private reportSize(): void {
    const d = this.fit.proposeDimensions();
    this.ui.onSize(this.client.geometry, d && d.cols > 0 && d.rows > 0 ? { cols: d.cols, rows: d.rows } : null);
  }

  private showRole(role: Role, downgradedBecause?: string): void {
    const observer = role === 'observer';
    this.term.options.disableStdin = observer;
    this.ui.role.textContent = observer ? 'OBSERVER · read-only' : 'CONTROLLER';
    this.ui.role.className = `badge ${role}`;
    this.ui.toggleRole.textContent = observer ? 'Take control' : 'Watch only';
    this.ui.observerBanner.textContent = downgradedBecause
      ? `Observer mode (${downgradedBecause}): you see everything, your keys are not sent.`
      : 'Observer mode: you see everything, your keys are not sent.';
    show(this.ui.observerBanner, observer);
    document.body.classList.toggle('observing', observer);
    if (!observer) this.fitToWindow();
  }

  private setStatus(state: ConnectionState, attempt = 0): void {
    const text: Record<ConnectionState, string> = {
      connecting: 'connecting…',
      joining: 'joining…',
      live: 'live',
      reconnecting: `${this.client.serverShutDown ? 'the server shut down; the session is still running: reconnecting' : 'connection lost, reconnecting'}${attempt > 1 ? ` (attempt ${attempt})` : ''}…`,
      ended: 'disconnected',
    };
    this.ui.status.textContent = text[state];
    this.ui.status.className = `pill ${state}`;
    // Membership is only current while live: grey it out otherwise.
    document.body.classList.toggle('offline', state !== 'live');
  }

  /** While reconnecting keeps failing, ask REST why: a deleted session or a dead token will not come back. */
  private async checkSession(): Promise<void> {
    try {
      await this.opts.api.get(this.opts.sessionId);
    } catch (e) {
      if (!(e instanceof RestError)) return;
      if (e.status === 404) this.ui.onLost('gone');
      if (e.status === 401) this.ui.onLost('unauthorized', e.code);
    }
  }
}

/** The server's refusal of the controller role to a principal that has only pty:observe. */
function isObserveOnly(message: string): boolean {
  return message.startsWith('PERMISSION_DENIED') && message.includes('pty:observe');
}
