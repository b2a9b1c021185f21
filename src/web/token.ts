// The bearer token: from the URL fragment (`#token=…`, which `npm start` prints), else this tab's
// session storage, else typed into the page. It never goes into a query string; once read from the
// fragment it is taken out of the address bar.

const KEY = 'pty-ws.token';

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
