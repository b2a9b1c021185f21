// Who works in a session besides its members, so an agent at work is visible to the humans: every
// client with a task queued or running, once each, with what it is doing, for MembershipChanged's
// `kind: "agent"` entries (docs/protocol.md, MembershipChanged; src/protocol/server-payloads.ts, Member).
import type { AgentPresence } from '../hub/types.ts';

/** Who sent a task: the connection's client id (or `a2a:<principal>` for the A2A bindings) and a label. */
export interface TaskSender {
  client_id: string;
  label: string;
}

export interface PresenceInput {
  /** Unfinished tasks in arrival order, the running one among them. */
  runs: Iterable<{ sender: TaskSender }>;
  running: { sender: TaskSender } | null;
  /** The first queued task's sender, and what holds it back (null: nothing, it is about to run). */
  next: { sender: TaskSender; waitingFor: string | null } | null;
}

/** One entry per sender: the most telling thing it does (running, then waiting, then queued). */
export function agentPresence({ runs, running, next }: PresenceInput): AgentPresence[] {
  const out = new Map<string, AgentPresence>();
  const put = (sender: TaskSender, activity: string) => {
    if (!out.has(sender.client_id)) out.set(sender.client_id, { client_id: sender.client_id, label: sender.label, activity });
  };
  if (running) put(running.sender, 'running a command');
  if (next) put(next.sender, next.waitingFor ?? 'about to type');
  for (const r of runs) put(r.sender, 'has a task queued');
  return [...out.values()].sort((a, b) => (a.client_id < b.client_id ? -1 : a.client_id > b.client_id ? 1 : 0));
}
