// The targets `npm run bench` judges, declared once: cost per output byte and ratios to baselines
// measured in the same run, which hold on any machine (docs/performance.md, "Targets"). The rows
// that judge them are in bench/report/.
export const TARGETS = {
  /** Router + PTY host CPU seconds per 100 MB (every thread; durable log and keyframes on) ≤ this × ttyd's process. */
  serverCpuVsTtyd: 1.5,
  /** Binary output MB/s ≥ this × ttyd's, and the stretch. */
  binaryVsTtyd: 1.0,
  binaryVsTtydStretch: 1.25,
  /** JSON output MB/s ≥ this × ttyd's. */
  jsonVsTtyd: 0.9,
  /** Bytes the router and PTY host write to disk per output byte (journal, WAL and checkpoints) ≤ this. */
  diskPerByte: 2,
  /** Echo p50 and p99 ≤ this × the bare one-process relay's, same rounds. */
  echoVsRelay: 1.25,
  /** Echo p99 ≤ this × ttyd's, same rounds. */
  echoP99VsTtyd: 2,
  /** Session B's echo p99 while session A floods ≤ this × B's alone. */
  floodedEchoP99: 1.5,
  /** Each of 10 observers (the slowest counts) ≥ this × the single observer's rate. */
  tenObserversShare: 0.9,
  /** The router's CPU per delivered byte with 32 observers ≤ this × with 10: fan-out costs no more per copy as it grows. */
  thirtyTwoObserversCpuVsTen: 1.0,
  /** Replay of 1000 frames to its Keyframe, every frame size, median ≤ this many ms. */
  replayMs: 20,
  /** Router + PTY host memory per idle session ≤ this many MiB. */
  idleSessionMiB: 0.25,
  /** Router memory per joiner that never reads ≤ this many MiB. */
  stalledJoinerMiB: 2,
} as const;
