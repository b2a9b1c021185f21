// The page's Share panel (docs/sharing.md): mint a watch or pair link for the attached session,
// copy it, see the active shares and revoke them. Only for bearers that may control the session;
// a watch-only page never shows it.
import type { MintShareBody, SessionsApi, ShareInfo } from '../client/sessions-api.ts';
import { h, show } from './dom.ts';

export interface SharePanelUi {
  panel: HTMLElement;
  form: HTMLFormElement;
  url: HTMLInputElement;
  copy: HTMLButtonElement;
  list: HTMLUListElement;
  onError(message: string): void;
}

export class SharePanel {
  constructor(
    private readonly api: SessionsApi,
    private readonly sessionId: string,
    private readonly ui: SharePanelUi,
  ) {
    ui.form.onsubmit = (ev) => {
      ev.preventDefault();
      void this.mint();
    };
    ui.copy.onclick = () => void this.copy();
    show(ui.url, false);
    show(ui.copy, false);
  }

  async toggle(): Promise<void> {
    const open = this.ui.panel.hidden;
    show(this.ui.panel, open);
    if (open) await this.refresh();
  }

  close(): void {
    show(this.ui.panel, false);
  }

  private async mint(): Promise<void> {
    const data = new FormData(this.ui.form);
    const body: MintShareBody = {
      scope: data.get('scope') === 'pty:control' ? 'pty:control' : 'pty:observe',
      expires_in: Number(data.get('expires') ?? 3600),
    };
    const label = String(data.get('label') ?? '').trim();
    if (label) body.label = label;
    try {
      const share = await this.api.mintShare(this.sessionId, body);
      this.ui.url.value = share.url;
      show(this.ui.url, true);
      show(this.ui.copy, true);
      this.ui.url.select();
      await this.refresh();
    } catch (e) {
      this.ui.onError(e instanceof Error ? e.message : String(e));
    }
  }

  private async copy(): Promise<void> {
    this.ui.url.select();
    try {
      await navigator.clipboard.writeText(this.ui.url.value);
      this.ui.copy.textContent = 'Copied';
    } catch {
      // No clipboard permission (plain http): the selected text can still be copied by hand.
      this.ui.copy.textContent = 'Press Ctrl-C';
    }
  }

  private async refresh(): Promise<void> {
    try {
      const shares = await this.api.listShares(this.sessionId);
      this.ui.list.replaceChildren(...shares.map((s) => this.row(s)));
      if (shares.length === 0) this.ui.list.append(h('li', { class: 'none' }, 'No active shares.'));
    } catch (e) {
      this.ui.onError(e instanceof Error ? e.message : String(e));
    }
  }

  private row(s: ShareInfo): HTMLLIElement {
    const revoke = h('button', { type: 'button', class: 'revoke', 'data-share-id': s.share_id }, 'Revoke');
    revoke.onclick = () => void this.revoke(s.share_id);
    const what = s.scope === 'pty:control' ? 'pair' : 'watch';
    return h('li', { class: 'share' }, h('span', {}, `${s.label || what} · ${what} · until ${new Date(s.expires_at).toLocaleString()}`), revoke);
  }

  private async revoke(shareId: string): Promise<void> {
    try {
      await this.api.revokeShare(this.sessionId, shareId);
      await this.refresh();
    } catch (e) {
      this.ui.onError(e instanceof Error ? e.message : String(e));
    }
  }
}
