// The attach upgrade (pty-ws-v1 §2, DECISIONS §8, §12, §15): every refusal is HTTP, before the upgrade.
import type { Context } from 'hono';
import type { WSContext } from 'hono/ws';
import { BindingError, restError, toBindingError } from '../src/errors.ts';
import type { Attachment } from '../src/hub/attachment.ts';
import { negotiate } from '../src/protocol/subprotocol.ts';
import type { AppDeps } from './deps.ts';
import { bearerFromHeader, hasTokenInQuery } from './request.ts';

export function attachHandler(deps: AppDeps) {
  const { config, store, hub, auth } = deps;
  const { metrics } = hub.deps;
  const count = (kind: string, bytes: number) => {
    metrics.inc('frames_in_total', { kind });
    metrics.inc('bytes_in_total', { kind }, bytes);
  };
  const refuse = (c: Context, status: number, body: unknown) => {
    metrics.inc('upgrade_rejections_total', { status: String(status) });
    return c.json(body, status as 400);
  };

  return async (c: Context) => {
    try {
      if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') return c.json(restError('upgrade_required', 'this endpoint only accepts a WebSocket upgrade'), 426);
      if (hasTokenInQuery(c)) throw new BindingError('INVALID_REQUEST', 'tokens must not travel in the URL query: use Authorization: Bearer or the bearer.<token> subprotocol');
      const instanceId = c.req.param('instance_id');
      const sessionId = c.req.param('session_id') ?? '';
      const record = instanceId === config.instanceId ? await store.getSession(instanceId, sessionId) : undefined;
      if (!record) return refuse(c, 404, restError('not_found', `unknown session ${sessionId}`));

      const negotiated = negotiate(c.req.header('sec-websocket-protocol'), auth.enforced || config.production);
      const principal = await auth.authenticate(bearerFromHeader(c) ?? negotiated.bearer);

      let attachment: Attachment | null = null;
      let wrapped: ReturnType<AppDeps['wrapSocket']> | null = null;
      return await deps.upgradeWebSocket(c, {
        onOpen: (_evt: Event, ws: WSContext) => {
          wrapped = deps.wrapSocket(ws, negotiated.binary, () => attachment?.onClose());
          attachment = hub.attach(record, wrapped, principal);
        },
        onMessage: (evt: MessageEvent, _ws: WSContext) => {
          const data: unknown = evt.data;
          if (typeof data === 'string') {
            count('text', data.length);
            attachment?.onText(data);
            return;
          }
          const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
          if (!bytes) return;
          count('binary', bytes.byteLength);
          attachment?.onBinary(bytes);
        },
        onClose: () => {
          wrapped?.dispose();
          attachment?.onClose();
        },
        onError: () => {
          wrapped?.dispose();
          attachment?.onClose();
        },
      });
    } catch (e) {
      const err = toBindingError(e);
      return refuse(c, err.info.http, restError(err.code, err.message));
    }
  };
}
