// GET /readyz (docs/operations.md, "Health"): what the server needs to serve, each checked on its
// own and within a deadline. A part that hangs (a stopped PTY host keeps its socket open and
// answers nothing) must read "not ready" while a probe still waits for the answer, not after the
// host client's own request timeout.

/** One thing the server needs: resolves when it answers, rejects (or hangs) when it does not. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<unknown>;
}

export interface Readiness {
  ready: boolean;
  /** By check name: `ok`, or what went wrong. */
  checks: Record<string, string>;
}

/** How long one check may take before it counts as not answering. */
export const READINESS_TIMEOUT_MS = 2_000;

export async function readiness(checks: readonly ReadinessCheck[], timeoutMs = READINESS_TIMEOUT_MS): Promise<Readiness> {
  const results = await Promise.all(checks.map(async (c) => [c.name, await within(c, timeoutMs)] as const));
  return { ready: results.every(([, r]) => r === 'ok'), checks: Object.fromEntries(results) };
}

async function within(c: ReadinessCheck, timeoutMs: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`did not answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([c.check().then(() => 'ok', (e: unknown) => (e instanceof Error ? e.message : String(e))), late]);
  } finally {
    clearTimeout(timer);
  }
}
