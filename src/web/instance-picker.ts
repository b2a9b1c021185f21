// The instance picker (docs/deployment.md, "A fleet"): behind a front door every instance's
// sessions are reached at this page's origin under /agents/{instance_id}/, so the page offers the
// instances registered at this origin and switches between them. Hidden with fewer than two.
import type { InstanceInfo, SessionsApi } from '../client/sessions-api.ts';
import { h, show } from './dom.ts';

export class InstancePicker {
  constructor(
    private readonly select: HTMLSelectElement,
    /** Called with the instance picked. */
    onPick: (instanceId: string) => void,
  ) {
    select.addEventListener('change', () => onPick(select.value));
  }

  /** Lists the instances again; a failure hides the picker (the session list reports its own). */
  async refresh(api: SessionsApi, current: string, enabled: boolean): Promise<void> {
    let here: InstanceInfo[] = [];
    if (enabled) {
      // Instances registered elsewhere are not reachable from this origin's paths.
      here = (await api.listInstances().catch(() => [])).filter((i) => i.base_url === location.origin || i.instance_id === current);
    }
    show(this.select, here.length > 1);
    if (here.length <= 1 || this.select.matches(':focus')) return;
    this.select.replaceChildren(
      ...here.map((i) => {
        const option = h('option', { value: i.instance_id }, i.reachable ? i.instance_id : `${i.instance_id} (unreachable)`);
        option.selected = i.instance_id === current;
        return option;
      }),
    );
  }
}
