// Sends webhooks (the policy is src/a2a/webhook-policy.ts).
/** Sends webhooks; the policy (which addresses may be reached) is the caller's (src/a2a/webhook-policy.ts). */
export interface WebhookTransport {
  /** The addresses `hostname` resolves to now; an IP literal resolves to itself. */
  resolve(hostname: string): Promise<string[]>;
  /**
   * POSTs `body` to `url` over a connection to `address` (one `resolve` gave, already checked), the
   * URL's host named in Host and in TLS (SNI, certificate check); a redirect is not followed.
   * Resolves with the response status; rejects on a network error, after `timeoutMs`, or once `signal` aborts.
   */
  post(req: { url: URL; address: string; headers: Record<string, string>; body: string; timeoutMs: number; signal?: AbortSignal }): Promise<number>;
}
