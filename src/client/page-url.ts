// The web page's URL as `pty-ws start` and share links print it (docs/sharing.md): the server's
// origin, and in the fragment the bearer, the session, whether to watch, the instance and a
// presence label. A client that is handed one attaches where the page would.

export interface PageLink {
  /** http(s)://host[:port]: where the REST routes and the attach URL are. */
  origin: string;
  token?: string;
  /** Absent on the page URL `pty-ws start` prints: that one opens the list (the default session). */
  sessionId?: string;
  /** `observe=1`: a watch link. */
  observe: boolean;
  instanceId?: string;
  label?: string;
}

/** The page link `text` is, or undefined when it is no http(s) URL with a fragment. */
export function parsePageUrl(text: string): PageLink | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hash.length <= 1) return undefined;
  const params = new URLSearchParams(url.hash.slice(1));
  const given = (name: string) => params.get(name) || undefined;
  return {
    origin: url.origin,
    token: given('token'),
    sessionId: given('session'),
    observe: params.get('observe') === '1',
    instanceId: given('instance'),
    label: given('label'),
  };
}
