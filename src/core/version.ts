// The version an instance reports (the AgentCard, the instance registry). Kept equal to
// package.json's `version`: test/a2a/fleet.test.ts checks it (the portable core reads no files).
export const PTY_WS_VERSION = '0.1.0';
