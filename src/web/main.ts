// The web terminal page (GET /): session list on the left, the attached terminal on the right.
// Routing is the URL fragment: `#session=<id>` attaches, `&observe=1` watches, `&label=` names you,
// `instance=<id>` picks another instance behind the same front door (docs/deployment.md).
import '@xterm/xterm/css/xterm.css';
import './style.css';
import { RestError, SessionsApi, type SessionInfo } from '../client/sessions-api.ts';
import { DefaultFollower } from './default-follower.ts';
import { SHARE_TOKEN_PREFIX } from '../protocol/share-info.ts';
import { isShareToken, shareLinkEnded } from '../client/share-link.ts';
import { byId, show } from './dom.ts';
import { InstancePicker } from './instance-picker.ts';
import { SessionList } from './session-list.ts';
import { SharePanel } from './share-panel.ts';
import { TerminalView } from './terminal-view.ts';
import { FONT_SIZES, Preferences, type Appearance } from './preferences.ts';
import { KeyBar } from './key-bar.ts';
import { wireFileButtons } from './file-buttons.ts';
import { Messages } from './messages.ts';
import { SizeView } from './size-view.ts';
import { forgetToken, fragmentHasToken, saveToken, takeToken, tokenHint } from './token.ts';

/** The instance that served the page; the fragment's `instance` picks another. */
const pageInstance = document.querySelector<HTMLMetaElement>('meta[name="pty-ws-instance"]')?.content ?? 'local';
let instanceId = new URLSearchParams(location.hash.slice(1)).get('instance') ?? pageInstance;
let token = takeToken();
let api = new SessionsApi({ origin: location.origin, instanceId, token });
let view: TerminalView | null = null;
let sharePanel: SharePanel | null = null;
let attached: string | null = null;

const preferences = new Preferences(safeStorage('localStorage'));
let appearance = preferences.load();
const keyBar = new KeyBar(byId('keybar'), (data) => view?.sendKeys(data), () => view?.focus());
const pageTitle = document.title;
const sizeView = new SizeView({ info: byId('size-info'), banner: byId('size-banner'), pane: byId('terminal') });

const messages = new Messages({ error: byId('error'), errorText: byId('error-text'), errorClose: byId('error-close'), notice: byId('notice') });
const tokenForm = byId<HTMLFormElement>('token-form');
const showError = (message: string) => messages.error(message);

/** The server refused the token (a 401's `code`): a share link's end in its own words, else `message` and the token form. */
function refused(code: string | undefined, message: string): void {
  const linkEnded = shareLinkEnded(code);
  if (linkEnded) return showError(`${linkEnded[0]!.toUpperCase()}${linkEnded.slice(1)}.`);
  show(tokenForm, true);
  if (token) showError(message);
}

const sessions = () =>
  new SessionList(api, {
    list: byId<HTMLUListElement>('session-list'),
    form: byId<HTMLFormElement>('create-form'),
    onError: showError,
    onCreated: (id) => {
      location.hash = fragment(id, false);
    },
    href: (id, observe) => `#${fragment(id, observe)}`,
  });
let list = sessions();
const picker = new InstancePicker(byId<HTMLSelectElement>('instance-select'), (id) => {
  location.hash = id === pageInstance ? '' : `instance=${encodeURIComponent(id)}`;
});

/** The fragment of a session of the current instance. */
function fragment(sessionId: string, observe: boolean): string {
  const params = new URLSearchParams();
  if (instanceId !== pageInstance) params.set('instance', instanceId);
  params.set('session', sessionId);
  if (observe) params.set('observe', '1');
  return params.toString();
}

/** The message a failed session-list refresh showed: a later refresh that works takes it away. */
let refreshError: string | null = null;
/** The sessions as the last refresh listed them. */
let known: SessionInfo[] = [];
const follower = new DefaultFollower({
  list: () => api.list(),
  go: (id) => {
    location.hash = fragment(id, new URLSearchParams(location.hash.slice(1)).get('observe') === '1');
  },
  waiting: (text) => {
    const banner = byId('ended-banner');
    banner.textContent = `${banner.textContent ?? ''} ${text}`.trim();
  },
});

async function refresh(): Promise<void> {
  try {
    known = await list.refresh(attached);
    await picker.refresh(api, instanceId, !document.body.classList.contains('watch-only'));
    show(tokenForm, false);
    messages.clearError(refreshError);
    refreshError = null;
  } catch (e) {
    if (e instanceof RestError && e.status === 401) {
      refused(e.code, `The server refused this token. ${tokenHint}`);
    } else {
      // fetch's own failure (a TypeError): nothing answered, as while the server restarts.
      const unreachable = e instanceof TypeError;
      refreshError = unreachable ? 'The server does not answer (restarting?): trying again every few seconds.' : e instanceof Error ? e.message : String(e);
      // What the list says was true when the server last answered: not necessarily now.
      list.stale(`The server did not answer${unreachable ? '' : ` (${refreshError})`}: the list is from ${new Date().toLocaleTimeString()}.`);
      showError(refreshError);
    }
  }
}

function route(): void {
  const params = new URLSearchParams(location.hash.slice(1));
  const sessionId = params.get('session');
  const observe = params.get('observe') === '1';
  // A watch link (docs/sharing.md) can do nothing but watch: offer nothing else.
  const watchOnly = observe && ((token?.startsWith(SHARE_TOKEN_PREFIX) ?? false) || document.body.classList.contains('watch-only'));
  const wanted = params.get('instance') ?? pageInstance;
  if (wanted !== instanceId) {
    instanceId = wanted;
    api = new SessionsApi({ origin: location.origin, instanceId, token });
    list = sessions();
    view?.dispose();
    view = null;
    attached = null;
  }
  byId('instance-name').textContent = `instance ${instanceId}`;
  if (view && attached === sessionId) return;
  follower.stop();
  view?.dispose();
  view = null;
  attached = sessionId;
  messages.clearAll();
  document.body.classList.toggle('no-session', sessionId === null);
  show(byId('ended-banner'), false);
  show(byId('observer-banner'), false);
  show(byId('bar'), sessionId !== null);
  show(byId('members-panel'), sessionId !== null);
  show(byId('empty'), sessionId === null);
  document.body.classList.toggle('watch-only', watchOnly);
  document.title = pageTitle;
  // On a phone the sidebar is a drawer: picking a session closes it.
  if (sessionId !== null && window.matchMedia('(max-width: 700px)').matches) document.body.classList.remove('sidebar-toggled');
  sizeView.hide();
  show(byId('keybar'), sessionId !== null);
  sharePanel?.close();
  sharePanel = null;
  byId('status').textContent = 'not attached';
  byId('status').className = 'pill';
  void refresh();
  if (!sessionId) return;

  byId('session-title').textContent = `session …${sessionId.slice(-8)}`;
  sharePanel = watchOnly
    ? null
    : new SharePanel(api, sessionId, {
        panel: byId('share-panel'),
        form: byId<HTMLFormElement>('share-form'),
        url: byId<HTMLInputElement>('share-url'),
        copy: byId<HTMLButtonElement>('share-copy'),
        list: byId<HTMLUListElement>('share-list'),
        onError: showError,
      });
  view = new TerminalView(
    // A share link's guest goes by the share's label unless the link names one.
    { api, sessionId, token, observe, label: params.get('label') || (isShareToken(token) ? undefined : 'browser'), appearance, transformInput: (d) => keyBar.transform(d), tabStorage: safeStorage('sessionStorage') },
    {
      container: byId('terminal'),
      status: byId('status'),
      role: byId('role'),
      toggleRole: byId<HTMLButtonElement>('toggle-role'),
      observerBanner: byId('observer-banner'),
      endedBanner: byId('ended-banner'),
      controllers: byId<HTMLUListElement>('controllers'),
      observers: byId<HTMLUListElement>('observers'),
      clipboardAsk: { box: byId('clipboard-ask'), allow: byId('clipboard-allow'), deny: byId('clipboard-deny') },
      onError: showError,
      onNotice: (message) => messages.notice(message),
      onLive: () => void refresh(),
      onLost: (why, code) => {
        view?.dispose();
        if (why === 'gone') showError('This session no longer exists.');
        else refused(code, `The token is no longer accepted. ${tokenHint}`);
      },
      onTitle: (title) => {
        document.title = title ? `${title} · pty-ws` : pageTitle;
      },
      onSize: (session, fits) => sizeView.show(session, fits),
      onWatchOnly: () => {
        attached = null;
        params.set('observe', '1');
        location.hash = params.toString();
      },
    },
  );
  // A default session that ended with the server: on to the one the next start makes.
  view.client.on('closed', (c) => follower.ended(known.find((s) => s.session_id === sessionId), c.reason));
  void view.start();
}

tokenForm.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const value = String(new FormData(tokenForm).get('token') ?? '').trim();
  if (!value) return forgetToken();
  saveToken(value);
  tokenForm.reset();
  useToken(value);
});

/** A new bearer (typed, or a `#token=` pasted into the address bar): the list and the view start over with it. */
function useToken(value: string | null): void {
  token = value;
  api = new SessionsApi({ origin: location.origin, instanceId, token });
  list = sessions();
  view?.dispose();
  view = null;
  attached = null;
  route();
}
byId('refresh').addEventListener('click', () => void refresh());
byId('detach').addEventListener('click', () => {
  void view?.detach();
  view = null;
  location.hash = '';
});
wireFileButtons({
  recording: byId('recording'),
  upload: byId('upload'),
  uploadInput: byId<HTMLInputElement>('upload-input'),
  download: byId('download'),
  api: () => api,
  session: () => attached,
  onDone: (message) => messages.notice(message),
  onError: showError,
});
byId('share').addEventListener('click', () => void sharePanel?.toggle());
window.addEventListener('hashchange', () => (fragmentHasToken() ? useToken(takeToken()) : route()));
// A cleared search box says nothing about an earlier search.
byId<HTMLInputElement>('search').addEventListener('input', (ev) => {
  if (!(ev.target as HTMLInputElement).value) byId('search-result').textContent = '';
});
byId<HTMLInputElement>('search').addEventListener('keydown', (ev) => {
  if (ev.key !== 'Enter') return;
  ev.preventDefault();
  byId('search-result').textContent = view?.find((ev.target as HTMLInputElement).value, ev.shiftKey ? 'newer' : 'older') ?? '';
});
byId('sidebar-toggle').addEventListener('click', () => document.body.classList.toggle('sidebar-toggled'));
byId('font-smaller').addEventListener('click', () => setAppearance({ ...appearance, fontSize: Math.max(FONT_SIZES.min, appearance.fontSize - 1) }));
byId('font-larger').addEventListener('click', () => setAppearance({ ...appearance, fontSize: Math.min(FONT_SIZES.max, appearance.fontSize + 1) }));
byId('theme').addEventListener('click', () => setAppearance({ ...appearance, theme: appearance.theme === 'dark' ? 'light' : 'dark' }));
setAppearance(appearance);
setInterval(() => void refresh(), 5000);
route();

/** Theme and font size: applied to the page and the terminal, remembered in this browser. */
function setAppearance(a: Appearance): void {
  appearance = a;
  preferences.save(a);
  document.body.classList.toggle('theme-light', a.theme === 'light');
  byId('theme').textContent = a.theme === 'dark' ? 'Light' : 'Dark';
  view?.setAppearance(a);
}

function safeStorage(which: 'localStorage' | 'sessionStorage'): Storage | null {
  try {
    return window[which];
  } catch {
    return null;
  }
}
