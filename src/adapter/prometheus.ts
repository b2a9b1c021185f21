// The Metrics port on prom-client, with the hub's point-in-time gauges read at scrape time. Shared
// by the Node and Deno adapters: prom-client runs on Deno through its Node compatibility layer.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { COUNTERS, HISTOGRAMS, type CounterName, type HistogramName, type HubStats, type Labels } from '../core/metrics.ts';
import type { ExposedMetrics } from '../router/router.ts';

const PREFIX = 'pty_ws_';

export interface PrometheusOptions {
  /**
   * prom-client's process and Node runtime collectors (CPU, memory, event-loop lag, heap). Off on
   * Deno, whose `perf_hooks.monitorEventLoopDelay` is a stub: the lag gauges would read NaN.
   */
  processMetrics: boolean;
}

export class PrometheusMetrics implements ExposedMetrics {
  readonly registry = new Registry();
  private readonly counters = new Map<CounterName, Counter>();
  private readonly histograms = new Map<HistogramName, Histogram>();
  private readonly sessions: Gauge;
  private readonly clients: Gauge;

  constructor(opts: PrometheusOptions) {
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    for (const [name, c] of Object.entries(COUNTERS) as Array<[CounterName, (typeof COUNTERS)[CounterName]]>) {
      this.counters.set(name, new Counter({ name: PREFIX + name, help: c.help, labelNames: [...c.labels], registers: [this.registry] }));
    }
    for (const [name, h] of Object.entries(HISTOGRAMS) as Array<[HistogramName, (typeof HISTOGRAMS)[HistogramName]]>) {
      this.histograms.set(name, new Histogram({ name: PREFIX + name, help: h.help, labelNames: [...h.labels], buckets: [...h.buckets], registers: [this.registry] }));
    }
    this.sessions = new Gauge({ name: `${PREFIX}sessions`, help: 'Sessions by state and backend', labelNames: ['state', 'backend'], registers: [this.registry] });
    this.clients = new Gauge({ name: `${PREFIX}attached_clients`, help: 'Joined connections by role', labelNames: ['role'], registers: [this.registry] });
  }

  inc(name: CounterName, labels: Labels = {}, value = 1): void {
    this.counters.get(name)!.inc(labels, value);
  }

  observe(name: HistogramName, seconds: number, labels: Labels = {}): void {
    this.histograms.get(name)!.observe(labels, seconds);
  }

  async render(stats: HubStats): Promise<{ contentType: string; body: string }> {
    this.sessions.reset();
    for (const s of stats.sessions) this.sessions.set({ state: s.state, backend: s.backend }, s.count);
    this.clients.reset();
    for (const c of stats.clients) this.clients.set({ role: c.role }, c.count);
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
