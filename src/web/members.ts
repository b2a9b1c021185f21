// The sidebar's presence list: controllers and observers from MembershipChanged, you marked, and
// an agent (a client with a task in the session) badged with what it waits for (docs/protocol.md,
// MembershipChanged).
import type { Membership } from '../client/types.ts';
import { h } from './dom.ts';

export function renderMembers(m: Membership, me: string | null, ui: { controllers: HTMLUListElement; observers: HTMLUListElement }): void {
  const item = (member: Membership['controllers'][number]) =>
    h(
      'li',
      { class: [member.client_id === me ? 'me' : '', member.kind === 'agent' ? 'agent' : ''].filter(Boolean).join(' ') },
      member.kind === 'agent' && h('span', { class: 'kind' }, 'agent '),
      member.label || 'unlabelled',
      h('span', { class: 'id' }, ` ${member.client_id.slice(-6)}`),
      member.client_id === me && h('span', { class: 'you' }, ' (you)'),
      member.activity !== undefined && h('div', { class: 'activity' }, member.activity),
    );
  ui.controllers.replaceChildren(...m.controllers.map(item));
  ui.observers.replaceChildren(...m.observers.map(item));
}
