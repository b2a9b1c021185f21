// The web terminal page (GET /): session list on the left, the attached terminal on the right.
// Routing is the URL fragment: `#session=<id>` attaches, `&observe=1` watches, `&label=` names you,
// `instance=<id>` picks another instance behind the same front door (docs/deployment.md).
import '@xterm/xterm/css/xterm.css';
import './style.css';
import { RestError, SessionsApi } from '../client/sessions-api.ts';
import { SHARE_TOKEN_PREFIX } from '../protocol/share-info.ts';
import { byId, show } from './dom.ts';
import { InstancePicker } from './instance-picker.ts';
import { SessionList } from './session-list.ts';
import { SharePanel } from './share-panel.ts';
import { TerminalView } from './terminal-view.ts';
import { forgetToken, saveToken, takeToken } from './token.ts';

/** The instance that served the page; the fragment's `instance` picks another. */
const pageInstance = document.querySelector<HTMLMetaElement>('meta[name="pty-ws-instance"]')?.content ?? 'local';
let instanceId = new URLSearchParams(location.hash.slice(1)).get('instance') ?? pageInstance;
let token = takeToken();
let api = new SessionsApi({ origin: location.origin, instanceId, token });
let view: TerminalView | null = null;
let sharePanel: SharePanel | null = null;
let attached: string | null = null;

const errorBox = byId('error');
const tokenForm = byId<HTMLFormElement>('token-form');

function showError(message: string): void {
  errorBox.textContent = message;
  show(errorBox, true);
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

async function refresh(): Promise<void> {
  try {
    await list.refresh(attached);
    await picker.refresh(api, instanceId, !document.body.classList.contains('watch-only'));
    show(tokenForm, false);
    if (refreshError !== null && errorBox.textContent === refreshError) show(errorBox, false);
    refreshError = null;
  } catch (e) {
    if (e instanceof RestError && e.status === 401) {
      show(tokenForm, true);
      if (token) showError('The server refused this token. Paste a valid one.');
    } else {
      refreshError = e instanceof Error ? e.message : String(e);
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
  view?.dispose();
  view = null;
  attached = sessionId;
  show(errorBox, false);
  show(byId('ended-banner'), false);
  show(byId('observer-banner'), false);
  show(byId('bar'), sessionId !== null);
  show(byId('members-panel'), sessionId !== null);
  show(byId('empty'), sessionId === null);
  document.body.classList.toggle('watch-only', watchOnly);
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
    { api, sessionId, token, observe, label: params.get('label') || 'browser' },
    {
      container: byId('terminal'),
      status: byId('status'),
      role: byId('role'),
      toggleRole: byId<HTMLButtonElement>('toggle-role'),
      observerBanner: byId('observer-banner'),
      endedBanner: byId('ended-banner'),
      controllers: byId<HTMLUListElement>('controllers'),
      observers: byId<HTMLUListElement>('observers'),
      onError: showError,
      onLive: () => void refresh(),
      onLost: (why) => {
        view?.dispose();
        showError(why === 'gone' ? 'This session no longer exists.' : 'The token is no longer accepted.');
        if (why === 'unauthorized') show(tokenForm, true);
      },
      onWatchOnly: () => {
        attached = null;
        params.set('observe', '1');
        location.hash = params.toString();
      },
    },
  );
  void view.start();
}

tokenForm.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const value = String(new FormData(tokenForm).get('token') ?? '').trim();
  if (!value) return forgetToken();
  saveToken(value);
  token = value;
  api = new SessionsApi({ origin: location.origin, instanceId, token });
  list = sessions();
  tokenForm.reset();
  attached = null;
  route();
});
byId('refresh').addEventListener('click', () => void refresh());
byId('detach').addEventListener('click', () => {
  void view?.detach();
  view = null;
  location.hash = '';
});
byId('recording').addEventListener('click', () => void download());
byId('share').addEventListener('click', () => void sharePanel?.toggle());
window.addEventListener('hashchange', route);
setInterval(() => void refresh(), 5000);
route();

/** The attached session's recording as a .cast file: fetched with the bearer header, saved from a blob. */
async function download(): Promise<void> {
  if (!attached) return;
  try {
    const res = await api.recording(attached);
    const url = URL.createObjectURL(await res.blob());
    const a = document.createElement('a');
    a.href = url;
    a.download = `pty-ws-${attached}.cast`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (e) {
    showError(e instanceof Error ? e.message : String(e));
  }
}
