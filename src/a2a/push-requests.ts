// The push-notification config params of A2A v1.0 (docs/a2a.md, "Push notifications"): a
// TaskPushNotificationConfig to create, and the task and config ids the other three name. The
// token and credentials become request headers of every notification: printable ASCII only.
import * as v from 'valibot';

const Tenant = v.optional(v.string());
const Id = (name: string) => v.pipe(v.string(`${name} must be a string`), v.minLength(1, `${name} must be non-empty`), v.maxLength(128, `${name} must be at most 128 characters`));
/** Absent or empty: the SDKs send a proto3 string field left unset as "". */
const Unset = v.literal('');
const HeaderValue = (name: string, max: number) =>
  v.pipe(v.string(`${name} must be a string`), v.maxLength(max, `${name} must be at most ${max} characters`), v.regex(/^[\x20-\x7e]*$/, `${name} must be printable ASCII on one line`));

/** An HTTP authentication scheme (RFC 9110 §11.1: a token), and the credentials that follow it in Authorization. */
const Authentication = v.object({
  scheme: v.pipe(v.string('authentication.scheme must be a string'), v.regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, 'authentication.scheme must be an HTTP authentication scheme such as Bearer')),
  credentials: v.optional(HeaderValue('authentication.credentials', 4096)),
});

/** A config as CreateTaskPushNotificationConfig and SendMessage's `configuration` carry it. */
export const PushConfigParams = v.object({
  tenant: Tenant,
  id: v.optional(v.union([Unset, Id('id')])),
  taskId: v.optional(v.union([Unset, Id('taskId')])),
  url: v.pipe(v.string('url must be a string'), v.minLength(1, 'url is required: the webhook to notify')),
  token: v.optional(v.union([Unset, HeaderValue('token', 1024)])),
  authentication: v.optional(Authentication),
});
export type PushConfigParams = v.InferOutput<typeof PushConfigParams>;

/** GetTaskPushNotificationConfig and DeleteTaskPushNotificationConfig. */
export const PushConfigIdParams = v.object({ tenant: Tenant, taskId: Id('taskId'), id: Id('id') });

export const ListPushConfigsParams = v.object({
  tenant: Tenant,
  taskId: Id('taskId'),
  pageSize: v.optional(v.pipe(v.number('pageSize must be a number'), v.integer('pageSize must be an integer'), v.minValue(0, 'pageSize must be 0..100'), v.maxValue(100, 'pageSize must be 0..100'))),
  pageToken: v.optional(v.string('pageToken must be a string')),
});

/** TaskPushNotificationConfig as answered (the config's token and authentication are its creator's own). */
export interface PushConfigAnswer {
  id: string;
  taskId: string;
  url: string;
  token?: string;
  authentication?: { scheme: string; credentials?: string };
}
