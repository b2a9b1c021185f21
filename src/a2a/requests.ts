// The request parameters of A2A v1.0's standard bindings (JSON-RPC `params`, HTTP+JSON bodies and
// query strings), in A2A's canonical JSON: camelCase, enums by their proto names (docs/a2a.md).
import * as v from 'valibot';
import { hasScope, type Principal, type Scope } from '../auth/principal.ts';
import { A2A_ERRORS, BindingError } from '../protocol/errors.ts';
import { describeIssue } from '../protocol/envelope.ts';
import { TASK_STATES, UserMessage } from '../protocol/a2a.ts';

/** The key of `message.metadata` that chooses the session host of a new context (docs/a2a.md). */
export const SESSION_METADATA_KEY = 'pty-ws/session';

const Tenant = v.optional(v.string());
const Metadata = v.optional(v.record(v.string(), v.unknown()));
const TaskId = v.pipe(v.string('id must be a string'), v.minLength(1, 'id must be non-empty'), v.maxLength(128, 'id must be at most 128 characters'));
const Count = (name: string) => v.pipe(v.number(`${name} must be a number`), v.integer(`${name} must be an integer`), v.minValue(0, `${name} must not be negative`));

export const SendMessageRequest = v.object({
  tenant: Tenant,
  message: UserMessage,
  configuration: v.optional(
    v.object({
      acceptedOutputModes: v.optional(v.array(v.string())),
      historyLength: v.optional(Count('configuration.historyLength')),
      returnImmediately: v.optional(v.boolean()),
      taskPushNotificationConfig: v.optional(v.unknown()),
    }),
  ),
  metadata: Metadata,
});
export type SendMessageRequest = v.InferOutput<typeof SendMessageRequest>;

export const GetTaskRequest = v.object({ tenant: Tenant, id: TaskId, historyLength: v.optional(Count('historyLength')) });

/** CancelTask and SubscribeToTask. */
export const TaskIdRequest = v.object({ tenant: Tenant, id: TaskId, metadata: Metadata });

/** A key ListTasks does not know is refused: dropped, a filter such as `context_id` would widen the answer to everything. */
const unknownKey = (issue: v.StrictObjectIssue) => (issue.expected === 'never' ? `unknown key (ListTasks takes ${LIST_KEYS})` : 'params must be an object');
const LIST_KEYS = 'tenant, contextId, status, pageSize, pageToken, historyLength, statusTimestampAfter, includeArtifacts';

export const ListTasksRequest = v.strictObject({
  tenant: Tenant,
  contextId: v.optional(v.string()),
  status: v.optional(v.picklist(TASK_STATES, `status must be one of ${TASK_STATES.join(', ')}`)),
  pageSize: v.optional(v.pipe(Count('pageSize'), v.minValue(1, 'pageSize must be 1..100'), v.maxValue(100, 'pageSize must be 1..100'))),
  pageToken: v.optional(v.string()),
  historyLength: v.optional(Count('historyLength')),
  statusTimestampAfter: v.optional(v.pipe(v.string(), v.check((s) => !Number.isNaN(Date.parse(s)), 'statusTimestampAfter must be an ISO-8601 timestamp'))),
  includeArtifacts: v.optional(v.boolean('includeArtifacts must be a boolean')),
}, unknownKey);
export type ListTasksRequest = v.InferOutput<typeof ListTasksRequest>;

/** A2A's invalid-params error (JSON-RPC -32602, HTTP 400): the request is well formed, its params are not. */
export function invalidParams(message: string, metadata: Record<string, string> = {}): BindingError {
  return new BindingError('INVALID_REQUEST', message, { metadata, a2a: A2A_ERRORS.invalidParams });
}

/** The params as `schema` reads them; else invalid params, the problem prefixed with `where` (e.g. the metadata key). */
export function parseParams<S extends v.GenericSchema>(schema: S, value: unknown, where?: string): v.InferOutput<S> {
  const r = v.safeParse(schema, value);
  if (!r.success) throw invalidParams(where ? `${where}: ${describeIssue(r.issues[0])}` : describeIssue(r.issues[0]));
  return r.output;
}

export function requireScope(p: Principal, scope: Scope, what: string): void {
  if (!hasScope(p, scope)) throw new BindingError('PERMISSION_DENIED', `this bearer cannot ${what}: that needs the ${scope} scope`);
}

export function taskNotFound(taskId: string): BindingError {
  return new BindingError('TASK_NOT_FOUND', `task ${taskId} not found`, { metadata: { taskId } });
}
