// The AgentCard (docs/protocol.md §10.1), with the extension's live params.
import type { Config } from '../src/config.ts';
import { BINDING_URI, EXTENSION_URI } from '../src/protocol/uris.ts';

export function agentCard(config: Config, origins: { http: string; ws: string }, authEnforced: boolean, operations: string[]) {
  const endpoint = `${origins.ws}/agents/${encodeURIComponent(config.instanceId)}/sessions/{session_id}/attach`;
  const security = authEnforced
    ? {
        securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer', description: 'Authorization: Bearer, or the bearer.<base64url token> subprotocol entry' } } },
        securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      }
    : {};
  return {
    name: 'pty-ws',
    description: 'Live terminal sessions that people and agents attach to over one WebSocket.',
    version: '0.1.0',
    provider: { organization: 'pty-ws', url: origins.http },
    supportedInterfaces: [{ url: endpoint, protocolBinding: BINDING_URI, protocolVersion: '1.0' }],
    bindings: [
      {
        uri: BINDING_URI,
        endpoint,
        preference: 'secondary',
        operations,
        notes:
          'Optimal for interactive PTY attach; control-plane operations preferred via REST. ListTasks on this binding is scoped to the connection\'s session (binding §4.4 deviation). ' +
          'A message to a session running a shell is a command run in the live terminal (its output is the task artifact); push-notification config operations answer UNSUPPORTED_OPERATION (PushNotificationNotSupportedError).',
      },
    ],
    capabilities: {
      streaming: true,
      pushNotifications: false,
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
        description: 'SendMessage with a text part runs it in the session\'s shell, visibly to everyone attached; the task completes with its exit status and output.',
        tags: ['shell', 'command', 'task'],
        examples: ['ls -la', 'make test'],
      },
    ],
    ...security,
  };
}
