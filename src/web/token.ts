// The bearer token: from the URL fragment (`#token=…`, which the first `npm start` and
// `pty-ws token` print), else this tab's session storage, else typed into the page. It never goes
// into a query string; once read from the fragment it is taken out of the address bar. A
// `#token=` pasted into an open tab is taken at once (main.ts, on hashchange).

const KEY = 'pty-ws.token';

/** What the page says when it has no working token: where a new one comes from. */
export const tokenHint = 'Run `npx pty-ws token` on the server for a new one (it prints the page URL with it), then open that URL here or paste the token.';

export function fragmentHasToken(): boolean {
  return new URLSearchParams(location.hash.slice(1)).has('token');
}

export function takeToken(): string | null {
  const params = new URLSearchParams(location.hash.slice(1));
  const fromFragment = params.get('token');
  if (fromFragment) {
    sessionStorage.setItem(KEY, fromFragment);
    params.delete('token');
    const rest = params.toString();
    history.replaceState(null, '', `${location.pathname}${rest ? `#${rest}` : ''}`);
    return fromFragment;
  }
  return sessionStorage.getItem(KEY);
}

export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}
