// One POST of a push notification (docs/a2a.md, "Push notifications"): the webhook's host resolved
// now, every address checked against the policy, the request sent to the address checked, with the
// config's token and authentication. Anything but a 2xx answer is a failure.
import type { WebhookTransport } from '../ports/webhook-transport.ts';
import { PTY_WS_VERSION } from '../core/version.ts';
import type { WebhookPolicy } from './webhook-policy.ts';

/** What a config says about where and how its notifications go. */
export interface WebhookTarget {
  url: string;
  token: string | null;
  authScheme: string | null;
  authCredentials: string | null;
}

/** The policy refused the webhook: nothing was sent. */
export class WebhookRefused extends Error {
  override readonly name = 'WebhookRefused';
}

export class WebhookSender {
  constructor(
    private readonly deps: {
      transport: WebhookTransport;
      policy: WebhookPolicy;
      /** Longest one POST may take, answer included. */
      timeoutMs: number;
    },
  ) {}

  /** The webhook's URL and the address it reaches now, when the policy allows both; else WebhookRefused. */
  async check(raw: string): Promise<{ url: URL; address: string }> {
    const url = this.deps.policy.url(raw);
    if (typeof url === 'string') throw new WebhookRefused(url);
    let addresses: string[];
    try {
      addresses = await this.deps.transport.resolve(url.hostname.replace(/^\[(.*)\]$/, '$1'));
    } catch (e) {
      throw new WebhookRefused(`${url.hostname} does not resolve (${e instanceof Error ? e.message : String(e)})`);
    }
    const refused = this.deps.policy.addresses(url, addresses);
    if (refused !== null) throw new WebhookRefused(refused);
    return { url, address: addresses[0]! };
  }

  /** POSTs `body` to the target; rejects with why it was not delivered. */
  async send(target: WebhookTarget, body: string, signal?: AbortSignal): Promise<void> {
    const { url, address } = await this.check(target.url);
    const headers: Record<string, string> = {
      'content-type': 'application/a2a+json',
      'user-agent': `pty-ws/${PTY_WS_VERSION}`,
      'a2a-version': '1.0',
    };
    // The token under both names the SDKs read (the spec names none); the authentication as Authorization.
    if (target.token !== null) headers['x-a2a-notification-token'] = headers['a2a-notification-token'] = target.token;
    if (target.authScheme !== null) headers.authorization = target.authCredentials === null ? target.authScheme : `${target.authScheme} ${target.authCredentials}`;
    const status = await this.deps.transport.post({ url, address, headers, body, timeoutMs: this.deps.timeoutMs, signal });
    if (status < 200 || status > 299) throw new Error(`the webhook answered HTTP ${status}`);
  }
}
