// The database schema. Changing it means running `npm run db:generate` and committing the
// new migration under storage/migrations/.
import { getTableColumns } from 'drizzle-orm';
import { customType, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/** A blob as the driver gave it, as Uint8Array: a view, not a copy (Node's client hands out Buffers, the others ArrayBuffers). */
export function bytesFromDriver(value: ArrayBuffer | Uint8Array): Uint8Array {
  return value instanceof Uint8Array ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : new Uint8Array(value);
}

/**
 * Bytes as Uint8Array on every runtime: drizzle's own blob column hands out Node Buffers, which
 * Deno has no global for; the libSQL clients return an ArrayBuffer.
 */
const bytes = customType<{ data: Uint8Array; driverData: ArrayBuffer | Uint8Array }>({
  dataType: () => 'blob',
  fromDriver: bytesFromDriver,
})

export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    instanceId: text('instance_id').notNull(),
    backend: text('backend').notNull(),
    sessionClass: text('session_class').notNull(),
    argv: text('argv', { mode: 'json' }).$type<string[]>(),
    command: text('command'),
    cwd: text('cwd'),
    env: text('env', { mode: 'json' }).$type<Record<string, string>>().notNull(),
    cols: integer('cols').notNull(),
    rows: integer('rows').notNull(),
    label: text('label'),
    state: text('state', { enum: ['created', 'running', 'closed'] }).notNull(),
    /** ISO-8601 UTC. */
    createdAt: text('created_at').notNull(),
    closedAt: text('closed_at'),
    exitCode: integer('exit_code'),
    closeReason: text('close_reason'),
    createdBy: text('created_by'),
    /** Someone has joined it: the first joiner of a session that never had a member is controller (docs/protocol.md §5.1). */
    hadMember: integer('had_member', { mode: 'boolean' }).notNull().default(false),
    /**
     * How it was made: `a2a` for the context of an A2A message without contextId, which ends after
     * an idle time (docs/a2a.md, "Contexts are sessions"); `rest` for REST's POST; null for the
     * default session (and sessions stored before this column).
     */
    createdVia: text('created_via', { enum: ['rest', 'a2a'] }),
    /** The remote PTY host it runs on, by name (docs/remote-hosts.md); null: the router's local host. */
    host: text('host'),
    /** Highest committed log sequence; survives a log pruned down to nothing. */
    currentSequence: integer('current_sequence').notNull().default(0),
    /**
     * Sequence numbers this session may hand out: none above it reaches a client before a higher
     * ceiling is stored (docs/protocol.md §3.4), so a crash never lets a number be used twice.
     */
    sequenceCeiling: integer('sequence_ceiling').notNull().default(0),
    /** Numbers skipped or lost, in all: after crashes, and log frames the database never took (docs/protocol.md §3.4). */
    skippedSequences: integer('skipped_sequences').notNull().default(0),
    /** Bytes of this session's log rows (`frame` and `output`), kept by every commit and prune: the log budgets read it (docs/operations.md). */
    logBytes: integer('log_bytes').notNull().default(0),
  },
  (t) => [index('sessions_instance_id_idx').on(t.instanceId), index('sessions_creator_idx').on(t.instanceId, t.createdBy, t.state)],
);

const { currentSequence: _current, sequenceCeiling: _ceiling, skippedSequences: _skipped, logBytes: _bytes, ...recordColumns } = getTableColumns(sessions);
/** The columns of a SessionRecord: the numbering columns are read only through the sequence ledger. */
export const sessionRecordColumns = recordColumns;

export const sessionLog = sqliteTable(
  'session_log',
  {
    sessionId: text('session_id').notNull(),
    sequence: integer('sequence').notNull(),
    kind: text('kind').notNull(),
    /** Milliseconds since the epoch: retention compares it with a number. */
    createdAt: integer('created_at').notNull(),
    /** The frame as sent to JSON clients; empty for Output, which keeps `output` and `frame_id`. */
    frame: text('frame').notNull(),
    /** Output: the PTY's bytes as they came (docs/protocol.md §3.5). */
    output: bytes('output'),
    /** Output: the id the frame was sent with, so a replay sends the same frame. */
    frameId: text('frame_id'),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.sequence] })],
);

/**
 * Runs of a session's sequence numbers whose frames the log does not have and never will: frames
 * the database refused until the write queue gave up on them, and numbers a crash skipped
 * (docs/protocol.md §3.4). A replay that crosses one says so (docs/protocol.md §6.2).
 */
export const logLosses = sqliteTable(
  'log_losses',
  {
    sessionId: text('session_id').notNull(),
    firstSequence: integer('first_sequence').notNull(),
    lastSequence: integer('last_sequence').notNull(),
    /** `commit_failed`, `queue_full` or `skipped` (LogLoss.reason). */
    reason: text('reason').notNull(),
    /** Milliseconds since the epoch. */
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.firstSequence] })],
);

/** A2A tasks; `contextId` is the session id. */
export const tasks = sqliteTable(
  'tasks',
  {
    id: text('id').primaryKey(),
    contextId: text('context_id').notNull(),
    state: text('state').notNull(),
    /** ISO-8601 UTC of the task's latest status. */
    statusTimestamp: text('status_timestamp').notNull(),
    task: text('task', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('tasks_context_id_status_timestamp_idx').on(t.contextId, t.statusTimestamp)],
);

/** A task's history, in order: the user's messages and the agent's status messages. */
export const taskMessages = sqliteTable(
  'task_messages',
  {
    taskId: text('task_id').notNull(),
    /** 0-based position in the task's history. */
    position: integer('position').notNull(),
    messageId: text('message_id').notNull(),
    message: text('message', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.position] })],
);

/** What a task produced (a command's output). */
export const taskArtifacts = sqliteTable(
  'task_artifacts',
  {
    taskId: text('task_id').notNull(),
    artifactId: text('artifact_id').notNull(),
    /** Order of the task's artifacts. */
    position: integer('position').notNull(),
    artifact: text('artifact', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.artifactId] })],
);

/** Share links (docs/sharing.md): a bearer for one session, stored only as its SHA-256. */
export const shares = sqliteTable(
  'shares',
  {
    id: text('id').primaryKey(),
    sessionId: text('session_id').notNull(),
    instanceId: text('instance_id').notNull(),
    tokenSha256: text('token_sha256').notNull().unique(),
    scope: text('scope', { enum: ['pty:observe', 'pty:control'] }).notNull(),
    label: text('label'),
    createdBy: text('created_by').notNull(),
    /** ISO-8601 UTC. */
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    revokedAt: text('revoked_at'),
    /** The SHA-256 of the root minter's bearer token, where it can be checked later (ShareRecord.minterTokenSha256). */
    minterTokenSha256: text('minter_token_sha256'),
  },
  (t) => [index('shares_session_id_idx').on(t.sessionId)],
);

/**
 * Remote PTY hosts' credentials (docs/remote-hosts.md): one per host name of an instance, stored
 * only as its SHA-256. Minting again replaces it; deleting the row revokes it.
 */
export const hosts = sqliteTable(
  'hosts',
  {
    instanceId: text('instance_id').notNull(),
    name: text('name').notNull(),
    tokenSha256: text('token_sha256').notNull().unique(),
    createdBy: text('created_by').notNull(),
    /** ISO-8601 UTC. */
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.instanceId, t.name] })],
);

/**
 * Which router serves an instance id (docs/operations.md, "One router per instance"): taken
 * atomically, renewed by its holder's heartbeat, free once `expires_at` passed.
 */
export const instanceLeases = sqliteTable('instance_leases', {
  instanceId: text('instance_id').primaryKey(),
  /** A random token of the holding router process. */
  owner: text('owner').notNull(),
  /** The holder's state directory (a digest from its lock): a router holding that lock knows the holder is gone. */
  stateKey: text('state_key').notNull(),
  /** JSON: pid, host name, state directory, since: for the refusal message. */
  holder: text('holder').notNull(),
  /** Milliseconds since the epoch. */
  expiresAt: integer('expires_at').notNull(),
});

/**
 * The instance registry (docs/deployment.md, "A fleet"): every router on this database records
 * where clients reach it and beats a heartbeat into `last_seen_at`; one whose heartbeat is older
 * than a few of its own intervals (or that stopped cleanly) is shown unreachable, with its sessions.
 */
export const instances = sqliteTable('instances', {
  instanceId: text('instance_id').primaryKey(),
  /**
   * A random token of the router run that wrote the row: beats and the stop mark only touch their
   * own run's row, so a router that lost its lease cannot mark its successor stopped.
   */
  owner: text('owner').notNull(),
  /** The http(s) origin clients reach it at: PTY_WS_PUBLIC_URL, else its listen URL. */
  baseUrl: text('base_url').notNull(),
  version: text('version').notNull(),
  /** ISO-8601 UTC of this router's start. */
  startedAt: text('started_at').notNull(),
  /** Milliseconds since the epoch, by the instance's clock: compared with a number. */
  lastSeenAt: integer('last_seen_at').notNull(),
  /** Its heartbeat cadence: readers judge staleness by the writer's own interval. */
  heartbeatMs: integer('heartbeat_ms').notNull(),
  /** Set by a clean stop (unreachable at once), cleared by the next start. */
  stoppedAt: integer('stopped_at'),
});

/**
 * Push-notification configs (docs/a2a.md, "Push notifications"): a webhook for one task, set by one
 * principal, who alone reads, lists or deletes it. Its token and credentials are kept as given: they
 * are sent with every notification.
 */
export const pushConfigs = sqliteTable(
  'push_configs',
  {
    /** This row's own id, which its deliveries name. */
    key: text('key').primaryKey(),
    taskId: text('task_id').notNull(),
    principalId: text('principal_id').notNull(),
    /** The config's A2A `id`: unique per task and principal. */
    configId: text('config_id').notNull(),
    url: text('url').notNull(),
    token: text('token'),
    authScheme: text('auth_scheme'),
    authCredentials: text('auth_credentials'),
    /** ISO-8601 UTC. */
    createdAt: text('created_at').notNull(),
  },
  (t) => [uniqueIndex('push_configs_task_principal_config_idx').on(t.taskId, t.principalId, t.configId)],
);

/**
 * The push outbox (docs/a2a.md, "Push notifications"): one row per event and config, written in the
 * transaction that stores the task change, deleted once delivered (or given up on). Only the
 * instance owning the task sends it, one row of a config at a time, oldest first; a router claims
 * a row with `lease_owner`/`lease_until` before sending, so two on one database never both send it.
 */
export const pushDeliveries = sqliteTable(
  'push_deliveries',
  {
    /** Insertion order: a config's rows are sent in this order. */
    id: integer('id').primaryKey(),
    configKey: text('config_key').notNull(),
    taskId: text('task_id').notNull(),
    instanceId: text('instance_id').notNull(),
    /** `status`: `event` is the StreamResponse JSON. `artifact`: `event` is the artifact id, sent as its chunks. */
    kind: text('kind', { enum: ['status', 'artifact'] }).notNull(),
    event: text('event').notNull(),
    /** An artifact's next chunk to send (those before it were delivered). */
    chunk: integer('chunk').notNull().default(0),
    /** Failed attempts so far. */
    attempts: integer('attempts').notNull().default(0),
    /** Milliseconds since the epoch: not sent before. */
    nextAttemptAt: integer('next_attempt_at').notNull(),
    /** The router run sending it now, until `lease_until` (ms). */
    leaseOwner: text('lease_owner'),
    leaseUntil: integer('lease_until'),
    lastError: text('last_error'),
    /** Milliseconds since the epoch. */
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('push_deliveries_instance_due_idx').on(t.instanceId, t.nextAttemptAt), index('push_deliveries_config_idx').on(t.configKey, t.id)],
);
