export const BINDING_URI = 'https://agentic-sandbox.aiwg.io/bindings/pty-ws/v1';
export const BINDING_VERSION = '1.0.0';
export const EXTENSION_URI = 'https://agentic-sandbox.aiwg.io/extensions/pty-extensions/v1';
export const JSON_SUBPROTOCOL = 'pty-ws.v1';
export const BINARY_SUBPROTOCOL = 'pty-ws.v1.binary';
export const SNAPSHOT_FORMAT = 'vt100-screen-state-v1';
