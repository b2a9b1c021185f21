// Runs a callback when a credential expires, however far away that is.

/** setTimeout's delay is a signed 32-bit count of ms (~24.8 days); longer waits are re-armed in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export function onExpiry(expiresAt: number, now: () => number, expire: () => void): { cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    const left = expiresAt - now();
    timer = left > MAX_DELAY_MS ? setTimeout(arm, MAX_DELAY_MS) : setTimeout(expire, Math.max(0, left));
  };
  arm();
  return { cancel: () => clearTimeout(timer) };
}
