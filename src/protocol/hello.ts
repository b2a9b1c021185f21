// binding_hello (pty-ws-v1 §5.1): the first frame on every accepted connection.
import { helloSessionHost, type SessionHostCaps } from '../hub/session-host.ts';
import { BINARY_SUBPROTOCOL, BINDING_URI, BINDING_VERSION, EXTENSION_URI, JSON_SUBPROTOCOL } from './uris.ts';

/** The A2A core operations of the binding (pty-ws-v1 §4), in the spec's order. */
export const A2A_CORE_OPERATIONS = ['SendMessage', 'SendStreamingMessage', 'GetTask', 'ListTasks', 'CancelTask', 'SubscribeToTask'];

export function hello(o: { supportedOperations: string[]; sessionId: string; currentSequence: number; sessionHost: SessionHostCaps; binary: boolean }) {
  return {
    binding_uri: BINDING_URI,
    binding_version: BINDING_VERSION,
    supported_operations: o.supportedOperations,
    activated_extensions: [EXTENSION_URI],
    session: { session_id: o.sessionId, current_sequence: o.currentSequence },
    session_host: helloSessionHost(o.sessionHost),
    payload_mode: { binary: o.binary, binary_subprotocol: BINARY_SUBPROTOCOL, json_subprotocol: JSON_SUBPROTOCOL },
  };
}
