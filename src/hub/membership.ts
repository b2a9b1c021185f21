// Who is joined to one session and in which role (docs/protocol.md §5.1): admission within the
// capacity limits, role changes, the lists MembershipChanged carries, and fan-out of log frames.
import type { Config } from '../core/config.ts';
import { BindingError } from '../protocol/errors.ts';
import type { Role } from '../protocol/pty-payloads.ts';
import type { MembershipLists } from '../protocol/server-payloads.ts';
import type { Member } from './member.ts';
import { assignRole, changeRole, type RoleDecision } from './roles.ts';
import type { AgentPresence, LogFrame, Unicast } from './types.ts';

export class Membership {
  private readonly members = new Map<string, Member>();
  /** Agents with work in the session (the task runner's list): shown, never counted against capacity. */
  private agents: readonly AgentPresence[] = [];
  constructor(private readonly limits: Pick<Config, 'maxControllers' | 'maxObservers'>) {}

  get size(): number {
    return this.members.size;
  }

  /**
   * The role a joining member gets; throws (RATE_LIMITED, PERMISSION_DENIED) when it cannot join.
   * `fresh`: the session never had a member, by its record (so across router restarts too).
   */
  decide(member: Member, requested: Role, fresh: boolean): RoleDecision & { firstController: boolean } {
    const counts = this.counts();
    const decision = assignRole({ requested, mayControl: member.mayControl, fresh, ...counts, ...this.limits });
    return { ...decision, firstController: decision.role === 'controller' && counts.controllers === 0 };
  }

  admit(member: Member, role: Role): void {
    member.role = role;
    this.members.set(member.clientId, member);
  }

  /** pty.request_role: the decision, applied to the member. */
  changeRole(member: Member, requested: Role): RoleDecision & { changed: boolean } {
    const decision = changeRole(member.role, { requested, mayControl: member.mayControl, ...this.counts(member), ...this.limits });
    const changed = decision.role !== member.role;
    member.role = decision.role;
    return { ...decision, changed };
  }

  /** False when the member was not (or no longer) joined. */
  remove(member: Member): boolean {
    return this.members.delete(member.clientId);
  }

  has(member: Member): boolean {
    return this.members.has(member.clientId);
  }

  all(): Iterable<Member> {
    return this.members.values();
  }

  /** Everyone leaves at once (the session ended): they were told already. */
  clear(): void {
    this.members.clear();
  }

  broadcast(frame: LogFrame): void {
    for (const m of this.members.values()) m.sendLog(frame);
  }

  /** A unicast frame for every member (an Error they all need to hear), made for each one. */
  tellEach(frame: (m: Member) => Unicast): void {
    for (const m of this.members.values()) m.tell(frame(m));
  }

  /** Throws unless the member is joined, may control, and is a controller. */
  requireController(member: Member, what: string): void {
    if (!this.has(member)) throw new BindingError('INVALID_REQUEST', `join the session (pty.join_session) before you ${what}`);
    if (!member.mayControl) throw new BindingError('PERMISSION_DENIED', `this connection's principal has only the pty:observe scope: it cannot ${what}`);
    if (member.role !== 'controller') throw new BindingError('PERMISSION_DENIED', `observers cannot ${what}: request the controller role first`);
  }

  /** False when the list is the one shown already. */
  setAgents(agents: readonly AgentPresence[]): boolean {
    if (JSON.stringify(agents) === JSON.stringify(this.agents)) return false;
    this.agents = agents;
    return true;
  }

  /**
   * A joined member with work in the session is marked an agent where it is; an agent that never
   * joined (an A2A caller, a connection that only sends tasks) is listed among the controllers,
   * since it types into the terminal.
   */
  lists(): MembershipLists {
    const agents = new Map(this.agents.map((a) => [a.client_id, a]));
    const list = (role: Role) =>
      [...this.members.values()]
        .filter((m) => m.role === role)
        .map((m) => {
          const agent = agents.get(m.clientId);
          agents.delete(m.clientId);
          return { client_id: m.clientId, ...(m.label ? { label: m.label } : {}), ...(agent ? { kind: 'agent' as const, activity: agent.activity } : {}) };
        });
    const controllers = list('controller');
    const observers = list('observer');
    for (const a of agents.values()) controllers.push({ client_id: a.client_id, label: a.label, kind: 'agent', activity: a.activity });
    return { controllers, observers };
  }

  private counts(except?: Member): { controllers: number; observers: number } {
    let controllers = 0;
    let observers = 0;
    for (const m of this.members.values()) {
      if (m === except) continue;
      if (m.role === 'controller') controllers++;
      else observers++;
    }
    return { controllers, observers };
  }
}
