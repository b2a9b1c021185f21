// The AgentCard (docs/protocol.md §10.1), with the extension's live params; `fleet` is the fleet
// agent's (docs/deployment.md, "The fleet agent"): the standard bindings at /fleet/a2a, no attach
// endpoint of its own (each session's is at its owner, GET /sessions).
import type { Context } from 'hono';
import type { Config } from '../src/core/config.ts';
import { sha256Hex } from '../src/core/ids.ts';
import { BINDING_URI, EXTENSION_URI } from '../src/protocol/uris.ts';
import { PTY_WS_VERSION } from '../src/core/version.ts';

/**
 * How long a client may reuse a card without asking again. It changes only with the server's
 * configuration (a restart), so a few minutes; after that a client revalidates it by its ETag.
 */
const CARD_MAX_AGE_SECONDS = 300;

/** A card as served: Cache-Control, an ETag of its JSON, and 304 when the client holds that one. */
export async function serveCard(c: Context, card: object): Promise<Response> {
  const body = JSON.stringify(card);
  const etag = `"${(await sha256Hex(body)).slice(0, 32)}"`;
  const headers = { 'cache-control': `public, max-age=${CARD_MAX_AGE_SECONDS}`, etag };
  const held = c.req.header('if-none-match')?.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (held?.includes(etag) || held?.includes('*')) return c.body(null, 304, headers);
  return c.body(body, 200, { ...headers, 'content-type': 'application/json' });
}

export function agentCard(config: Config, origins: { http: string; ws: string }, authEnforced: boolean, operations: string[], agent: 'instance' | 'fleet' = 'instance') {
  const endpoint = `${origins.ws}/agents/${encodeURIComponent(config.instanceId)}/sessions/{session_id}/attach`;
  const a2a = agent === 'fleet' ? `${origins.http}/fleet/a2a` : `${origins.http}/agents/${encodeURIComponent(config.instanceId)}/a2a`;
  // mTLS is one more way in (either one suffices), only where this server terminates TLS itself.
  const mtls = config.tlsClientCa !== undefined && config.tlsCert !== undefined;
  const security = authEnforced
    ? {
        securitySchemes: {
          bearer: { httpAuthSecurityScheme: { scheme: 'bearer', description: 'Authorization: Bearer, or the bearer.<base64url token> subprotocol entry' } },
          ...(mtls ? { mtls: { mtlsSecurityScheme: { description: 'a client certificate from the configured CA: subject CN = principal, subject OU values = scopes (pty:observe, pty:control, pty:admin)' } } } : {}),
        },
        securityRequirements: [{ schemes: { bearer: { list: [] } } }, ...(mtls ? [{ schemes: { mtls: { list: [] } } }] : [])],
      }
    : {};
  const standard = [
    { url: `${a2a}/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: `${a2a}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
  ];
  return {
    ...(agent === 'fleet'
      ? {
          name: 'pty-ws fleet',
          description:
            'Every instance sharing this database as one agent: ListTasks and GetTask span the fleet (each task names its instance in metadata.instance_id); ' +
            "a message to a session (contextId) of another instance, and CancelTask/SubscribeToTask of its tasks, are forwarded to that instance's own endpoint; a message without contextId starts a session on the instance that serves it.",
          supportedInterfaces: standard,
        }
      : {
          name: 'pty-ws',
          description: 'Live terminal sessions that people and agents attach to over one WebSocket.',
          // The standard bindings first, JSON-RPC preferred (docs/a2a.md): a generic A2A client picks the
          // first it speaks; the pty-ws binding is for attaching to a terminal.
          supportedInterfaces: [...standard, { url: endpoint, protocolBinding: BINDING_URI, protocolVersion: '1.0' }],
        }),
    version: PTY_WS_VERSION,
    provider: { organization: 'pty-ws', url: origins.http },
    // The fleet agent attaches nowhere itself: each session's attach_url (GET /sessions) is at its owner.
    ...(agent === 'fleet'
      ? {}
      : {
          bindings: [
            {
              uri: BINDING_URI,
              endpoint,
              preference: 'secondary',
              operations,
              notes:
                "Optimal for interactive PTY attach; control-plane operations preferred via the standard JSON-RPC and HTTP+JSON interfaces (supportedInterfaces). ListTasks on this binding is scoped to the connection's session (binding §4.4 deviation); on the standard interfaces it spans this instance. " +
                `The fleet agent (${origins.http}/fleet/.well-known/agent-card.json) spans every instance sharing this instance's database. ` +
                'A message to a session running a shell is a command run in the live terminal (its output is the task artifact); push-notification config operations answer UNSUPPORTED_OPERATION on this binding: manage them over the standard interfaces (SendMessage here sets one with configuration.taskPushNotificationConfig).',
            },
          ],
        }),
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extensions: [
        {
          uri: EXTENSION_URI,
          description: 'PTY verbs: roles, membership, resize, keyframes and replay (pty-extensions/v1).',
          required: false,
          params: {
            max_controllers: config.maxControllers,
            max_observers: config.maxObservers,
            keyframe_interval_seconds: config.keyframeIntervalSeconds,
            keyframe_interval_frames: config.keyframeIntervalFrames,
            replay_buffer_frames: config.replayBufferFrames,
            replay_buffer_retention_seconds: config.replayRetentionSeconds,
            default_cols: config.defaultCols,
            default_rows: config.defaultRows,
          },
        },
      ],
    },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'terminal',
        name: 'Terminal session',
        description: 'Attach to a live terminal: watch, type, resize, replay after reconnect.',
        tags: ['terminal', 'pty', 'shell'],
      },
      {
        id: 'shell-command',
        name: 'Run a command in the terminal',
        description:
          'SendMessage with a text part runs it in the session\'s shell, visibly to everyone attached; the task completes with its exit status and output. ' +
          'The contextId is the session id: without one a new session starts (its host from message.metadata["pty-ws/session"]: argv, command, cwd, env, terminal_size, label, session_backend).',
        tags: ['shell', 'command', 'task'],
        examples: ['ls -la', 'make test'],
      },
    ],
    ...security,
  };
}
