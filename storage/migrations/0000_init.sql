CREATE TABLE `session_log` (
	`session_id` text NOT NULL,
	`sequence` integer NOT NULL,
	`kind` text NOT NULL,
	`created_at` integer NOT NULL,
	`frame` text NOT NULL,
	PRIMARY KEY(`session_id`, `sequence`)
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`backend` text NOT NULL,
	`session_class` text NOT NULL,
	`argv` text,
	`command` text,
	`cwd` text,
	`env` text NOT NULL,
	`cols` integer NOT NULL,
	`rows` integer NOT NULL,
	`label` text,
	`state` text NOT NULL,
	`created_at` text NOT NULL,
	`closed_at` text,
	`exit_code` integer,
	`close_reason` text,
	`created_by` text,
	`current_sequence` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sessions_instance_id_idx` ON `sessions` (`instance_id`);--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`context_id` text NOT NULL,
	`state` text NOT NULL,
	`status_timestamp` text NOT NULL,
	`task` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `tasks_context_id_status_timestamp_idx` ON `tasks` (`context_id`,`status_timestamp`);