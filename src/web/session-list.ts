// The sidebar's session list: each session with its state and links to attach or watch it, a button
// to end it, and the form that creates a new one. Ended sessions fold away under "ended (N)", so
// those of earlier runs do not pile up above the live ones.
import type { SessionInfo, SessionsApi } from '../client/sessions-api.ts';
import { h } from './dom.ts';

export interface SessionListUi {
  list: HTMLUListElement;
  form: HTMLFormElement;
  onError(message: string): void;
  /** Called after a session was created, with its id. */
  onCreated(sessionId: string): void;
  /** The fragment that attaches to (or, with `observe`, watches) the session. */
  href(sessionId: string, observe: boolean): string;
}

export class SessionList {
  /** Whether the ended fold is open: it survives the list's refreshes. */
  private endedOpen = false;

  constructor(
    private readonly api: SessionsApi,
    private readonly ui: SessionListUi,
  ) {
    ui.form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void this.create();
    });
  }

  /** Lists the sessions again (the one attached marked); resolves with them. */
  async refresh(current: string | null): Promise<SessionInfo[]> {
    const sessions = await this.api.list();
    this.ui.list.classList.remove('stale');
    const ended = sessions.filter((s) => s.state === 'closed');
    const rows = sessions.filter((s) => s.state !== 'closed').map((s) => this.row(s, s.session_id === current));
    if (sessions.length === 0) rows.push(h('li', { class: 'none' }, 'No sessions yet.'));
    if (ended.length > 0) rows.push(this.endedFold(ended, current));
    this.ui.list.replaceChildren(...rows);
    return sessions;
  }

  /** The ended sessions, newest first, folded unless opened (or one of them is attached). */
  private endedFold(ended: SessionInfo[], current: string | null): HTMLLIElement {
    const summary = h('summary', {}, `ended (${ended.length})`);
    const fold = h('details', { class: 'ended-fold' }, summary, h('ul', {}, ...ended.reverse().map((s) => this.row(s, s.session_id === current))));
    fold.open = this.endedOpen || ended.some((s) => s.session_id === current);
    // Only a click decides whether it stays open (before the toggle: `open` is still the old state).
    summary.addEventListener('click', () => (this.endedOpen = !fold.open));
    return h('li', { class: 'ended' }, fold);
  }

  /** The list could not be refreshed: what it shows may no longer be true (a session "running" on a stopped server). */
  stale(why: string): void {
    this.ui.list.classList.add('stale');
    this.ui.list.querySelector('li.stale-note')?.remove();
    this.ui.list.prepend(h('li', { class: 'stale-note' }, why));
  }

  private row(s: SessionInfo, current: boolean): HTMLLIElement {
    const name = s.label || s.command || (s.argv ? s.argv.join(' ') : 'shell');
    const state = s.state === 'closed' ? `ended${s.exit_code === null ? '' : ` (exit ${s.exit_code})`}` : s.state;
    const end = h('button', { type: 'button', class: 'end', title: 'End this session (SIGHUP)' }, 'End');
    end.addEventListener('click', () => void this.end(s.session_id));
    return h(
      'li',
      { class: `session state-${s.state}${current ? ' current' : ''}`, 'data-session-id': s.session_id },
      h('div', { class: 'name' }, name),
      h('div', { class: 'meta' }, `${state} · ${s.session_id.slice(-8)} · ${new Date(s.created_at).toLocaleTimeString()}`),
      h(
        'div',
        { class: 'actions' },
        h('a', { href: this.ui.href(s.session_id, false), class: 'attach' }, 'Attach'),
        h('a', { href: this.ui.href(s.session_id, true), class: 'watch' }, 'Watch'),
        s.state !== 'closed' && end,
      ),
    );
  }

  private async create(): Promise<void> {
    const data = new FormData(this.ui.form);
    const command = String(data.get('command') ?? '').trim();
    const label = String(data.get('label') ?? '').trim();
    try {
      const s = await this.api.create({ ...(command ? { command } : {}), ...(label ? { label } : {}) });
      this.ui.form.reset();
      this.ui.onCreated(s.session_id);
    } catch (e) {
      this.ui.onError(e instanceof Error ? e.message : String(e));
    }
  }

  private async end(sessionId: string): Promise<void> {
    try {
      await this.api.delete(sessionId);
      await this.refresh(null);
    } catch (e) {
      this.ui.onError(e instanceof Error ? e.message : String(e));
    }
  }
}
