// The A2A v1.0 objects the binding carries (docs/protocol.md §8.3) and the payloads of its task operations
// (docs/protocol.md §8.1). A2A objects use camelCase; the binding's own payload fields stay snake_case.
import * as v from 'valibot';

export const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

const TERMINAL: ReadonlySet<TaskState> = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);

/** Every state but the terminal ones (interrupted states included: they can still go on). */
export const UNFINISHED_STATES: readonly TaskState[] = TASK_STATES.filter((s) => !TERMINAL.has(s));

export interface Part {
  text?: string;
  raw?: string;
  url?: string;
  data?: unknown;
  metadata?: Record<string, unknown>;
  filename?: string;
  mediaType?: string;
}

export interface Message {
  messageId: string;
  contextId?: string;
  taskId?: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: Part[];
  metadata?: Record<string, unknown>;
  extensions?: string[];
  referenceTaskIds?: string[];
}

export interface TaskStatus {
  state: TaskState;
  message?: Message;
  /** ISO-8601 UTC. */
  timestamp: string;
}

export interface Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: Part[];
  metadata?: Record<string, unknown>;
}

/** An artifact, or a chunk of one, on a stream (A2A v1.0: `append` after the first chunk, `lastChunk` on the last). */
export interface TaskArtifactUpdateEvent {
  taskId: string;
  contextId: string;
  artifact: Artifact;
  append: boolean;
  lastChunk: boolean;
}

export interface Task {
  id: string;
  contextId: string;
  status: TaskStatus;
  artifacts?: Artifact[];
  history?: Message[];
  metadata?: Record<string, unknown>;
}

export interface TaskStatusUpdateEvent {
  taskId: string;
  contextId: string;
  status: TaskStatus;
  metadata?: Record<string, unknown>;
}

// ---------------------------------------------------------------- what clients send

const Metadata = v.record(v.string(), v.unknown());
const Id = (name: string) => v.pipe(v.string(`${name} must be a string`), v.minLength(1, `${name} must be non-empty`), v.maxLength(128, `${name} must be at most 128 characters`));

const PartIn = v.pipe(
  v.object({
    text: v.optional(v.string()),
    raw: v.optional(v.string()),
    url: v.optional(v.string()),
    data: v.optional(v.unknown()),
    metadata: v.optional(Metadata),
    filename: v.optional(v.string()),
    mediaType: v.optional(v.string()),
  }),
  v.check((p) => [p.text, p.raw, p.url, p.data].filter((x) => x !== undefined).length === 1, 'a part has exactly one of text, raw, url or data'),
);

/** A message from a client: always the user's side of the conversation. */
export const UserMessage = v.object({
  messageId: Id('messageId'),
  contextId: v.optional(v.string()),
  taskId: v.optional(v.string()),
  role: v.picklist(['ROLE_USER'], 'role must be "ROLE_USER" for a message sent to the agent'),
  parts: v.pipe(v.array(PartIn), v.minLength(1, 'a message needs at least one part')),
  metadata: v.optional(Metadata),
  extensions: v.optional(v.array(v.string())),
  referenceTaskIds: v.optional(v.array(v.string())),
});
export type UserMessage = v.InferOutput<typeof UserMessage>;

const HistoryLength = v.pipe(v.number('history_length must be a number'), v.integer(), v.minValue(0));

export const SendMessagePayload = v.object({
  message: UserMessage,
  configuration: v.optional(
    v.object({
      acceptedOutputModes: v.optional(v.array(v.string())),
      historyLength: v.optional(HistoryLength),
      /** A2A v1.0: answer at once instead of when the task is terminal or interrupted. */
      returnImmediately: v.optional(v.boolean()),
      /** The pre-1.0 spelling: `blocking: false` means the same as `returnImmediately: true`. */
      blocking: v.optional(v.boolean()),
      taskPushNotificationConfig: v.optional(v.unknown()),
      pushNotificationConfig: v.optional(v.unknown()),
    }),
  ),
  metadata: v.optional(Metadata),
});
export type SendMessagePayload = v.InferOutput<typeof SendMessagePayload>;

export const GetTaskPayload = v.object({ task_id: Id('task_id'), history_length: v.optional(v.nullable(HistoryLength)) });

/** ListTasks refuses keys it does not know (a dropped filter would answer every task): parsePayload makes them A2A invalid params. */
const listKeys = (keys: string) => (issue: v.StrictObjectIssue) => (issue.expected === 'never' ? `unknown key (it takes ${keys})` : 'must be an object');

/**
 * A2A's ListTasksRequest names the context to list; on this binding the connection's session is
 * the only one there is (pty-ws-v1 §4.4), and naming another is refused before this is read
 * (src/hub/attachment.ts), so a context here is the connection's own and changes nothing.
 */
const contextKeys = { context_id: v.optional(v.nullable(v.string())), contextId: v.optional(v.nullable(v.string())) };

export const ListTasksPayload = v.strictObject(
  {
    page_size: v.optional(v.nullable(v.pipe(v.number('page_size must be a number'), v.integer(), v.minValue(1, 'page_size must be 1..100'), v.maxValue(100, 'page_size must be 1..100')))),
    page_token: v.optional(v.nullable(v.string())),
    filter: v.optional(v.nullable(v.strictObject({ status: v.optional(v.picklist(TASK_STATES, `filter.status must be one of ${TASK_STATES.join(', ')}`)), ...contextKeys }, listKeys('status, context_id')))),
    history_length: v.optional(v.nullable(HistoryLength)),
    include_artifacts: v.optional(v.nullable(v.boolean())),
    ...contextKeys,
  },
  listKeys('page_size, page_token, filter, history_length, include_artifacts, context_id'),
);
export type ListTasksPayload = v.InferOutput<typeof ListTasksPayload>;

/** CancelTask, SubscribeToTask and Unsubscribe. */
export const TaskIdPayload = v.object({ task_id: Id('task_id') });
