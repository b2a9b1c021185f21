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

  return async (c: Context) => {
    try {
      if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') return c.json(restError('upgrade_required', 'this endpoint only accepts a WebSocket upgrade'), 426);
      if (hasTokenInQuery(c)) throw new BindingError('INVALID_REQUEST', 'tokens must not travel in the URL query: use Authorization: Bearer or the bearer.<token> subprotocol');
      const instanceId = c.req.param('instance_id');
      const sessionId = c.req.param('session_id') ?? '';
      const record = instanceId === config.instanceId ? await store.getSession(instanceId, sessionId) : undefined;
      if (!record) return c.json(restError('not_found', `unknown session ${sessionId}`), 404);

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
          if (typeof data === 'string') attachment?.onText(data);
          else if (data instanceof ArrayBuffer) attachment?.onBinary(new Uint8Array(data));
          else if (ArrayBuffer.isView(data)) attachment?.onBinary(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
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
      return c.json(restError(err.code, err.message), err.info.http as 400);
    }
  };
}
