// What the runtime learned of a client's TLS certificate (docs/security.md, item 9): the contract
// between the adapters that read it and the authenticators that judge it.

/** What the runtime learned of the client's certificate in the handshake. */
export type ClientCertificate =
  | { verified: true; subjectCN: string; organizationalUnits: readonly string[]; validTo: number }
  | { verified: false; reason: string };
