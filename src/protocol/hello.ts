// binding_hello (docs/protocol.md §4): the first frame on every accepted connection.
import type { HelloPayload, SessionHostOffer } from './server-payloads.ts';
import { BINARY_SUBPROTOCOL, BINDING_URI, BINDING_VERSION, EXTENSION_URI, JSON_SUBPROTOCOL } from './uris.ts';

/** The A2A core operations of the binding (docs/protocol.md §8), in the spec's order. */
export const A2A_CORE_OPERATIONS = ['SendMessage', 'SendStreamingMessage', 'GetTask', 'ListTasks', 'CancelTask', 'SubscribeToTask'];

export function hello(o: { supportedOperations: string[]; sessionId: string; currentSequence: number; sessionHost: SessionHostOffer; binary: boolean }): HelloPayload {
  return {
    binding_uri: BINDING_URI,
    binding_version: BINDING_VERSION,
    supported_operations: o.supportedOperations,
    activated_extensions: [EXTENSION_URI],
    session: { session_id: o.sessionId, current_sequence: o.currentSequence },
    session_host: o.sessionHost,
    payload_mode: { binary: o.binary, binary_subprotocol: BINARY_SUBPROTOCOL, json_subprotocol: JSON_SUBPROTOCOL },
  };
}
