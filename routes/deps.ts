import type { AttachAdmission } from '../src/auth/admission.ts';
import type { Context } from 'hono';
import type { UpgradeWebSocket, WSContext } from 'hono/ws';
import type { A2aControlPlane } from '../src/a2a/control-plane.ts';
import type { FleetControlPlane } from '../src/a2a/fleet-plane.ts';
import type { Authenticator } from '../src/auth/authenticator.ts';
import type { ClientCertificate } from '../src/auth/certificate.ts';
import type { Config } from '../src/core/config.ts';
import type { SessionHub } from '../src/hub/hub.ts';
import type { ClientConnection } from '../src/ports/client-connection.ts';
import type { InstanceRegistryStore } from '../src/ports/instance-registry.ts';
import type { Store } from '../src/ports/store.ts';
import type { Readiness } from '../src/core/readiness.ts';
import type { ShareService } from '../src/shares/share-service.ts';
import type { HostCredentials } from '../src/auth/host-credentials.ts';
import type { PlacedHosts } from '../src/host-link/placed-hosts.ts';

/** The web terminal's bundled files by name (`terminal.js`, `terminal.css`), from the runtime adapter. */
export interface WebAssets {
  /** Resolves with the file, or undefined when there is no such asset; rejects when the bundle cannot be built. */
  get(name: string): Promise<{ body: Uint8Array; contentType: string } | undefined>;
}

/**
 * Files in a session's working directory (routes/files.ts), through the runtime's own calls. Both
 * refuse to follow a symlink at `name`; a failure rejects with the system error's `code`.
 */
export interface SessionFiles {
  /** Creates `dir/name` with mode 0600, never replacing a file (EEXIST). */
  write(dir: string, name: string, bytes: Uint8Array): Promise<void>;
  /** The bytes of the regular file `dir/name` (`code` EISDIR for anything else), at most `maxBytes` (EFBIG). */
  read(dir: string, name: string, maxBytes: number): Promise<Uint8Array>;
}

/** Remote PTY hosts (routes/hosts.ts): their credentials and the hosts the hub routes to. */
export interface HostDeps {
  credentials: HostCredentials;
  placed: PlacedHosts;
}

/** What the routes need; each runtime adapter supplies its own WebSocket upgrade and socket wrapper. */
export interface AppDeps {
  config: Config;
  store: Store;
  /** The instances sharing the database (GET /instances, GET /sessions). */
  registry: InstanceRegistryStore;
  hub: SessionHub;
  auth: Authenticator;
  shares: ShareService;
  /** Remote PTY hosts: their credentials and links (docs/remote-hosts.md). */
  hosts: HostDeps;
  /** Connections a principal holds open, counted together: attaches and the A2A bindings' streams (docs/protocol.md §1.6). */
  admission: AttachAdmission;
  /** The operations of the standard A2A bindings (JSON-RPC and HTTP+JSON). */
  a2a: A2aControlPlane;
  /** The fleet agent's operations (routes/fleet-a2a.ts): every registered instance's tasks. */
  fleet: FleetControlPlane;
  /** The web terminal's bundled files (absent: this runtime serves no web terminal). */
  webAssets?: WebAssets;
  /** Upload and download in a session's working directory (absent: this runtime offers none). */
  sessionFiles?: SessionFiles;
  upgradeWebSocket: UpgradeWebSocket;
  /** The adapter's view of an accepted socket; `onStale` runs when keepalive gives up on it. */
  wrapSocket(ws: WSContext, binary: boolean, onStale: () => void): ClientConnection & { dispose(): void };
  /** The client certificate of the request's TLS connection, where mTLS is on (PTY_WS_TLS_CLIENT_CA). */
  clientCertificate?(c: Context): ClientCertificate | undefined;
  /** The caller's network address as the runtime sees it (for the audit log). */
  remoteAddress(c: Context): string | undefined;
  /** The port this request came in on (to tell our own Host from a rebound one). */
  localPort(c: Context): number | undefined;
  /** Whether the server can serve: the database and the PTY host, each checked (src/core/readiness.ts). */
  ready(): Promise<Readiness>;
  /** The metrics exposition (Prometheus text on Node). */
  renderMetrics(): Promise<{ contentType: string; body: string }>;
}
