// Host principals (docs/remote-hosts.md): a credential of scope `pty:host` is bound to one host
// name of one instance and stored only as its SHA-256. It registers that host and does nothing
// else: every other route refuses it by its prefix, before any other authenticator sees it.
import { BindingError } from '../protocol/errors.ts';
import { randomToken, sha256Hex } from '../core/ids.ts';
import type { Clock } from '../ports/clock.ts';
import type { HostRecord, HostStore } from '../ports/host-store.ts';
import { HOST_TOKEN_PREFIX } from '../protocol/host-info.ts';
import type { Authenticator } from './authenticator.ts';
import type { ClientCertificate } from './certificate.ts';
import type { Principal } from './principal.ts';

export class HostCredentials {
  constructor(
    private readonly store: HostStore,
    private readonly clock: Clock,
    private readonly instanceId: string,
  ) {}

  /** A new credential for `name`, replacing any earlier one; the token is returned once and only its hash is kept. */
  async mint(name: string, createdBy: string): Promise<string> {
    const token = `${HOST_TOKEN_PREFIX}${randomToken()}`;
    await this.store.put({ instanceId: this.instanceId, name, tokenSha256: await sha256Hex(token), createdBy, createdAt: new Date(this.clock.now()).toISOString() });
    return token;
  }

  /** The host a bearer registers: UNAUTHENTICATED for none, an unknown or revoked host credential. */
  async hostOf(token: string | null): Promise<HostRecord> {
    if (!token?.startsWith(HOST_TOKEN_PREFIX)) throw new BindingError('UNAUTHENTICATED', 'a host link needs a host credential (pty-ws token --host NAME)');
    const rec = await this.store.byTokenHash(await sha256Hex(token));
    if (!rec || rec.instanceId !== this.instanceId) throw new BindingError('UNAUTHENTICATED', 'unknown or revoked host credential');
    return rec;
  }

  list(): Promise<HostRecord[]> {
    return this.store.list(this.instanceId);
  }

  revoke(name: string): Promise<boolean> {
    return this.store.remove(this.instanceId, name);
  }
}

/** Every route but the host link: a host credential attaches nothing and calls no user route. */
export class HostTokenRefusal implements Authenticator {
  constructor(
    private readonly base: Authenticator,
    private readonly credentials: HostCredentials,
  ) {}

  get enforced(): boolean {
    return this.base.enforced;
  }

  async knows(token: string): Promise<boolean> {
    return token.startsWith(HOST_TOKEN_PREFIX) || ((await this.base.knows?.(token)) ?? false);
  }

  async authenticate(token: string | null, certificate?: ClientCertificate): Promise<Principal> {
    if (!token?.startsWith(HOST_TOKEN_PREFIX)) return this.base.authenticate(token, certificate);
    const rec = await this.credentials.hostOf(token);
    throw new BindingError('PERMISSION_DENIED', `this is the host credential of ${rec.name} (pty:host): it links that PTY host and attaches nothing, calls no session or A2A route`);
  }

  byTokenSha256(sha256: string): Promise<Principal | undefined> {
    return this.base.byTokenSha256?.(sha256) ?? Promise.resolve(undefined);
  }
}
