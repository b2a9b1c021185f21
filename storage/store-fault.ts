// A write the database refused, as the error a client gets: which storage problem it is, named,
// instead of an opaque "internal server error" (docs/security.md, item 9).
import { BindingError } from '../src/protocol/errors.ts';
import { faultDetail, storageFaultKind, type StorageFaultKind } from './open-error.ts';

const FAULTS: Record<StorageFaultKind, { reason: string; http: number; words: string }> = {
  // RFC 4918's 507: the server cannot store what the request needs.
  full: { reason: 'STORAGE_FULL', http: 507, words: "the database's disk is full" },
  'read-only': { reason: 'STORAGE_READ_ONLY', http: 503, words: 'the database cannot be written' },
  busy: { reason: 'STORAGE_BUSY', http: 503, words: 'the database is locked by another process' },
  damaged: { reason: 'STORAGE_DAMAGED', http: 500, words: 'the database file is damaged' },
  unreachable: { reason: 'STORAGE_UNAVAILABLE', http: 503, words: 'the database server cannot be reached' },
  refused: { reason: 'STORAGE_UNAVAILABLE', http: 503, words: 'the database server refused our credentials' },
  dropped: { reason: 'STORAGE_UNAVAILABLE', http: 503, words: 'the database server closed the connection' },
};

/** `err` as a named INTERNAL BindingError when it is a storage fault an operator can act on; else `err` itself. */
export function storeFault(err: unknown): unknown {
  const kind = storageFaultKind(err);
  if (kind === undefined) return err;
  const { reason, http, words } = FAULTS[kind];
  return new BindingError('INTERNAL', `${words}: the change was not stored (${faultDetail(err)})`, { metadata: { reason }, http });
}
