// The A2A task operations of the binding (docs/protocol.md §8.1) as hub operation handlers.
import { hasScope, type Principal } from '../auth/principal.ts';
import { BindingError } from '../protocol/errors.ts';
import type { OpContext, OpHandler } from '../hub/types.ts';
import type { PushConfigRecord } from '../ports/push-store.ts';
import { GetTaskPayload, ListTasksPayload, SendMessagePayload, TaskIdPayload } from '../protocol/a2a.ts';
import { decodePageToken, encodePageToken } from './page-token.ts';
import { taskView } from './task-objects.ts';
import type { TaskService } from './task-service.ts';

/** The push-notification config operations: the binding's names (§4.7) and A2A v1.0's, all answered UNSUPPORTED_OPERATION here. */
const PUSH_CONFIG_OPS = [
  'SetTaskPushNotificationConfig',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
];

/** Checks a SendMessage's push config (src/a2a/push-configs.ts) so it can be stored with the task it creates or `continuing`. */
export type MessagePush = (p: Principal, raw: unknown, continuing?: string) => Promise<Omit<PushConfigRecord, 'taskId'>>;

export function taskOps(service: TaskService, push: MessagePush): Record<string, OpHandler> {
  const send =
    (streaming: boolean): OpHandler =>
    async (ctx) => {
      requireControl(ctx, 'send messages');
      const { message, configuration: cfg } = ctx.payload(SendMessagePayload);
      // A2A v1.0 names it taskPushNotificationConfig; earlier drafts pushNotificationConfig.
      const pushConfig = cfg?.taskPushNotificationConfig ?? cfg?.pushNotificationConfig;
      const tasks = service.forSession(ctx.session);
      const run = await tasks.submit(message, {
        params: () => ctx.serviceParameters,
        sender: { client_id: ctx.clientId, label: ctx.principal.id },
        follower: streaming ? tasks.connection(ctx) : undefined,
        accepted: streaming ? (task) => ctx.reply('SendStreamingMessage.Accepted', { task_id: task.id }) : undefined,
        push: pushConfig === undefined ? undefined : await push(ctx.principal, pushConfig, message.taskId),
      });
      if (streaming) return;
      const answer = () => ctx.reply('SendMessage.Response', { task: taskView(run.task, cfg?.historyLength) });
      // The answer waits for the task without holding up this connection's later frames (a CancelTask, say).
      if (cfg?.returnImmediately === true || cfg?.blocking === false) answer();
      else void tasks.settled(run).then(answer);
    };

  const ops: Record<string, OpHandler> = {
    SendMessage: send(false),
    SendStreamingMessage: send(true),

    GetTask: async (ctx) => {
      const { task_id, history_length } = ctx.payload(GetTaskPayload);
      ctx.reply('GetTask.Response', { task: await service.forSession(ctx.session).read(task_id, history_length ?? undefined) });
    },

    ListTasks: async (ctx) => {
      const req = ctx.payload(ListTasksPayload);
      const pageSize = req.page_size ?? 50;
      const after = req.page_token ? decodePageToken(req.page_token) : undefined;
      const page = await service.forSession(ctx.session).list({
        pageSize,
        after,
        state: req.filter?.status,
        historyLength: req.history_length ?? 0,
        includeArtifacts: req.include_artifacts ?? false,
      });
      ctx.reply('ListTasks.Response', { tasks: page.tasks, next_page_token: page.next ? encodePageToken(page.next) : '', page_size: pageSize, total_size: page.total });
    },

    CancelTask: async (ctx) => {
      requireControl(ctx, 'cancel tasks');
      const { task_id } = ctx.payload(TaskIdPayload);
      ctx.reply('CancelTask.Response', { task: await service.forSession(ctx.session).cancel(task_id) });
    },

    SubscribeToTask: (ctx) => service.forSession(ctx.session).subscribe(ctx, ctx.payload(TaskIdPayload).task_id),

    Unsubscribe: async (ctx) => {
      await service.forSession(ctx.session).unsubscribe(ctx, ctx.payload(TaskIdPayload).task_id);
      ctx.reply('Unsubscribe.Response', {});
    },
  };
  for (const op of PUSH_CONFIG_OPS) {
    ops[op] = () => {
      throw configsElsewhere();
    };
  }
  return ops;
}

function requireControl(ctx: OpContext, what: string): void {
  if (!hasScope(ctx.principal, 'pty:control')) throw new BindingError('PERMISSION_DENIED', `this connection's principal cannot ${what}: that needs the pty:control scope`);
}

/** The binding's §4.7 lets a server leave the config operations to the standard bindings: this one does. */
function configsElsewhere(): BindingError {
  return new BindingError(
    'UNSUPPORTED_OPERATION',
    'push-notification configs are managed over the JSON-RPC or HTTP+JSON binding (the AgentCard lists both); on pty-ws, SendMessage sets one with configuration.taskPushNotificationConfig',
  );
}
