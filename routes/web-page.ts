// GET / and GET /assets/*: the web terminal page and its bundle (no CDN: the runtime adapter bundles
// src/web/ itself and hands the files over through AppDeps.webAssets).
import type { Context } from 'hono';
import { restError } from '../src/protocol/errors.ts';
import type { AppDeps } from './deps.ts';

/** The page pulls scripts, styles and sockets from this origin only; xterm.js sets inline styles. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = { 'content-security-policy': CSP, 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' };

export function webPageHandler(deps: AppDeps) {
  return (c: Context) => {
    if (!deps.webAssets) {
      return c.html('<!doctype html><title>pty-ws</title><h1>pty-ws</h1><p>This runtime serves no web terminal. Attach with a WebSocket client or <code>pty-ws attach</code>: see the README.</p>');
    }
    return c.html(page(deps.config.instanceId), 200, SECURITY_HEADERS);
  };
}

export function webAssetHandler(deps: AppDeps) {
  return async (c: Context) => {
    const name = c.req.param('name') ?? '';
    try {
      const asset = await deps.webAssets?.get(name);
      if (!asset) return c.json(restError('not_found', `no asset ${name}`), 404);
      return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, { 'content-type': asset.contentType, 'cache-control': 'no-cache', ...SECURITY_HEADERS });
    } catch (e) {
      deps.hub.deps.logger.log('error', 'web terminal bundle unavailable', { error: e });
      return c.json(restError('web_bundle_unavailable', `the web terminal could not be built: ${e instanceof Error ? e.message : String(e)}`), 503);
    }
  };
}

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function page(instanceId: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="pty-ws-instance" content="${escape(instanceId)}">
<title>pty-ws</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/terminal.css">
<script type="module" src="/assets/terminal.js"></script>
</head>
<body>
<header class="top"><button id="sidebar-toggle" type="button" title="Show or hide the sidebar" aria-label="Show or hide the sidebar">☰</button><strong>pty-ws</strong><span id="instance-name" class="instance">instance ${escape(instanceId)}</span><span id="status" class="pill">not attached</span></header>
<div class="toasts">
  <p id="error" class="error" role="alert" hidden><span id="error-text"></span><button id="error-close" type="button" class="close" title="Dismiss" aria-label="Dismiss">×</button></p>
  <p id="notice" class="notice" role="status" hidden></p>
</div>
<div class="layout">
  <aside>
    <form id="token-form" hidden>
      <label for="token-input">Bearer token</label>
      <input id="token-input" name="token" type="password" autocomplete="off" spellcheck="false">
      <button>Use this token</button>
      <p class="hint">The first <code>npm start</code> on a state directory prints a page URL with <code>#token=…</code>; lost it? <code>npx pty-ws token</code> prints a new one (the old one stops working). Paste it here, or open its URL in this tab.</p>
    </form>
    <section>
      <div class="row"><h2>Sessions</h2><select id="instance-select" aria-label="Instance" hidden></select><button id="refresh" type="button" title="Refresh the list">Refresh</button></div>
      <ul id="session-list"></ul>
      <form id="create-form">
        <input name="command" placeholder="command (default: login shell)" autocomplete="off">
        <input name="label" placeholder="label" autocomplete="off">
        <button>New session</button>
      </form>
    </section>
    <section id="members-panel" hidden>
      <h2>Attached</h2>
      <h3>Controllers</h3><ul id="controllers"></ul>
      <h3>Observers</h3><ul id="observers"></ul>
    </section>
  </aside>
  <main>
    <div id="bar" hidden>
      <span id="session-title"></span>
      <span id="role" class="badge"></span>
      <button id="toggle-role" type="button"></button>
      <button id="share" type="button" title="Share a link that watches or types in this session">Share</button>
      <button id="recording" type="button" title="Download the retained log as asciicast v2">Recording</button>
      <button id="upload" type="button" title="Upload a file into the session's working directory">Upload</button><input id="upload-input" type="file" hidden>
      <button id="download" type="button" title="Download a file from the session's working directory">Download</button>
      <span id="size-info" class="size" title="The session's terminal size"></span>
      <span class="search"><input id="search" type="search" placeholder="Search" aria-label="Search the scrollback (Enter: older, Shift+Enter: newer)" title="Enter: older match, Shift+Enter: newer" autocomplete="off"><span id="search-result" class="hint"></span></span>
      <span class="appearance">
        <button id="font-smaller" type="button" title="Smaller font" aria-label="Smaller font">A−</button>
        <button id="font-larger" type="button" title="Larger font" aria-label="Larger font">A+</button>
        <button id="theme" type="button" title="Switch between the dark and the light theme">Light</button>
      </span>
      <button id="detach" type="button">Detach</button>
    </div>
    <div id="observer-banner" class="banner" hidden></div>
    <div id="ended-banner" class="banner ended" hidden></div>
    <div id="pane">
      <div class="overlays">
        <section id="share-panel" class="panel" hidden>
          <form id="share-form">
            <div class="row">
              <select name="scope" aria-label="What the link may do"><option value="pty:observe">Watch only</option><option value="pty:control">Pair (may type)</option></select>
              <select name="expires" aria-label="Expires after"><option value="3600">1 hour</option><option value="86400">1 day</option><option value="604800">7 days</option></select>
              <input name="label" placeholder="label (optional)" maxlength="128">
              <button id="share-create">Create link</button>
            </div>
          </form>
          <div class="row"><input id="share-url" readonly aria-label="Share link"><button id="share-copy" type="button">Copy</button></div>
          <ul id="share-list"></ul>
        </section>
        <div id="clipboard-ask" class="banner ask" role="alertdialog" aria-label="Clipboard" hidden><span>A program in this session wants to set your clipboard.</span><button id="clipboard-allow" type="button">Allow</button><button id="clipboard-deny" type="button">Deny</button></div>
        <div id="size-banner" class="banner" hidden></div>
      </div>
      <p id="empty" class="empty">Pick a session from the list, or create one.</p>
      <div id="terminal"></div>
    </div>
    <div id="keybar" class="keybar" hidden></div>
  </main>
</div>
</body>
</html>
`;
}
