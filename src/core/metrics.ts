// What the server measures, named once. The core counts through the Metrics port; an adapter
// exposes the values (Prometheus text on Node).

export const COUNTERS = {
  frames_in_total: { help: 'WebSocket messages received from clients', labels: ['kind'] },
  bytes_in_total: { help: 'Bytes received from clients', labels: ['kind'] },
  frames_out_total: { help: 'WebSocket messages sent to clients', labels: ['kind'] },
  bytes_out_total: { help: 'Bytes sent to clients', labels: ['kind'] },
  pty_output_bytes_total: { help: 'Bytes the PTYs printed', labels: [] },
  replay_requests_total: { help: 'Joins with replay_from, by result', labels: ['result'] },
  replay_lost_runs_total: { help: 'Runs of lost log frames (or numbers a crash skipped) a replay crossed and declared', labels: [] },
  retention_deleted_total: { help: 'Ended sessions and finished tasks deleted by retention (PTY_WS_ENDED_RETENTION_SECONDS), by what', labels: ['what'] },
  log_budget_pruned_bytes_total: { help: 'Log bytes deleted to keep within a budget: session (PTY_WS_SESSION_LOG_BUDGET_BYTES), ended or live (PTY_WS_LOG_BUDGET_BYTES)', labels: ['scope'] },
  log_budget_refusals_total: { help: 'Sessions refused with LOG_BUDGET_EXCEEDED', labels: [] },
  lagged_clients_total: { help: 'Times a client fell behind and had Output dropped (PTY_OUTPUT_LAGGED)', labels: [] },
  flow_pauses_total: { help: 'Times flow control held PTY output back, by what fell behind: screen, log or clients (one session: its credit withheld), all_screens or all_log (the router-wide backstop, every session)', labels: ['cause'] },
  keyframes_total: { help: 'Keyframes produced, by occasion', labels: ['occasion'] },
  screen_failures_total: { help: "Times a session's screen model threw (it is rebuilt from the log, up to 3 times a session)", labels: [] },
  upgrade_rejections_total: { help: 'Attach upgrades refused before the upgrade, by HTTP status', labels: ['status'] },
  push_deliveries_total: { help: 'Push-notification POSTs, by result: delivered, or retried (a failed try with tries left)', labels: ['result'] },
  push_dead_letters_total: { help: 'Push notifications given up on, by reason: attempts (every try failed), refused (the webhook policy refused its address at the last try), queue_full (its webhook fell too far behind)', labels: ['reason'] },
} as const satisfies Record<string, { help: string; labels: readonly string[] }>;

export const HISTOGRAMS = {
  keyframe_build_seconds: { help: 'Time to cut a Keyframe snapshot', labels: ['occasion'], buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5] },
  log_commit_seconds: { help: 'Duration of one group commit of the session log', labels: [], buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5] },
  pty_host_rtt_seconds: { help: 'Round trip of a request to the PTY host', labels: [], buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 1] },
} as const satisfies Record<string, { help: string; labels: readonly string[]; buckets: readonly number[] }>;

export type CounterName = keyof typeof COUNTERS;
export type HistogramName = keyof typeof HISTOGRAMS;
export type Labels = Record<string, string>;

export interface Metrics {
  inc(name: CounterName, labels?: Labels, value?: number): void;
  observe(name: HistogramName, seconds: number, labels?: Labels): void;
}

export const NO_METRICS: Metrics = { inc: () => undefined, observe: () => undefined };

/** Point-in-time values read when metrics are scraped. */
export interface HubStats {
  sessions: Array<{ state: string; backend: string; count: number }>;
  clients: Array<{ role: string; count: number }>;
}
