// The attach upgrade (docs/protocol.md §1.4): every refusal is HTTP, before the upgrade.
import type { Context } from 'hono';
import type { WSContext } from 'hono/ws';
import type { AdmissionTicket } from '../src/auth/admission.ts';
import { coversSession, hasScope } from '../src/auth/principal.ts';
import { BindingError, restError, toBindingError } from '../src/protocol/errors.ts';
import type { Attachment } from '../src/hub/attachment.ts';
import { peerFields } from '../src/hub/audit.ts';
import { negotiate } from '../src/protocol/subprotocol.ts';
import type { AppDeps } from './deps.ts';
import { checkOrigin, requireSecureTransport } from './guards.ts';
import { peerOf } from './edge.ts';
import { bearerFromHeader } from './request.ts';

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
  const { admission } = deps;

  return async (c: Context) => {
    const peer = peerOf(c, deps);
    let principalId: string | undefined;
    let ticket: AdmissionTicket | undefined;
    try {
      if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') return c.json(restError('upgrade_required', 'this endpoint only accepts a WebSocket upgrade'), 426);
      requireSecureTransport(c, config);
      checkOrigin(c, config);
      const negotiated = negotiate(c.req.header('sec-websocket-protocol'), auth.enforced || config.production);
      const principal = await auth.authenticate(bearerFromHeader(c) ?? negotiated.bearer, deps.clientCertificate?.(c));
      principalId = principal.id;

      const instanceId = c.req.param('instance_id');
      const sessionId = c.req.param('session_id') ?? '';
      if (instanceId !== config.instanceId) return refuse(c, 404, restError('not_found', `unknown instance ${instanceId}`));
      if (!hasScope(principal, 'pty:observe')) throw new BindingError('PERMISSION_DENIED', 'attaching needs at least the pty:observe scope');
      if (!coversSession(principal, sessionId)) throw new BindingError('PERMISSION_DENIED', `this bearer does not cover session ${sessionId}`);
      const record = await store.getSession(instanceId, sessionId);
      if (!record) return refuse(c, 404, restError('not_found', `unknown session ${sessionId}`));
      const admitted = admission.admit(principal);
      ticket = admitted;

      let attachment: Attachment | null = null;
      let wrapped: ReturnType<AppDeps['wrapSocket']> | null = null;
      const ended = () => {
        admitted.closed();
        wrapped?.dispose();
        attachment?.onClose();
      };
      return await deps.upgradeWebSocket(c, {
        onOpen: (_evt: Event, ws: WSContext) => {
          admitted.opened();
          wrapped = deps.wrapSocket(ws, negotiated.binary, () => attachment?.onClose());
          attachment = hub.attach(record, wrapped, principal, peer);
          attachment.onEnded(() => admitted.closed());
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
        onClose: ended,
        onError: ended,
      });
    } catch (e) {
      ticket?.closed();
      const err = toBindingError(e);
      const code = err.metadata.reason ?? err.code;
      hub.deps.logger.log(err.code === 'INTERNAL' ? 'error' : 'warn', 'audit.refused', { session: c.req.param('session_id'), status: err.info.http, code, message: err.message, principal: principalId, ...peerFields(peer), ...(err.code === 'INTERNAL' ? { error: e } : {}) });
      const res = refuse(c, err.info.http, restError(code, err.message));
      if (err.code === 'RATE_LIMITED') res.headers.set('retry-after', '1');
      return res;
    }
  };
}
