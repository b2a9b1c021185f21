CREATE TABLE `push_configs` (
	`key` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`principal_id` text NOT NULL,
	`config_id` text NOT NULL,
	`url` text NOT NULL,
	`token` text,
	`auth_scheme` text,
	`auth_credentials` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `push_configs_task_principal_config_idx` ON `push_configs` (`task_id`,`principal_id`,`config_id`);--> statement-breakpoint
CREATE TABLE `push_deliveries` (
	`id` integer PRIMARY KEY NOT NULL,
	`config_key` text NOT NULL,
	`task_id` text NOT NULL,
	`instance_id` text NOT NULL,
	`kind` text NOT NULL,
	`event` text NOT NULL,
	`chunk` integer DEFAULT 0 NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`lease_owner` text,
	`lease_until` integer,
	`last_error` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `push_deliveries_instance_due_idx` ON `push_deliveries` (`instance_id`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `push_deliveries_config_idx` ON `push_deliveries` (`config_key`,`id`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `created_via` text;--> statement-breakpoint
-- A task's push configs and pending deliveries go with it (written by hand: drizzle-kit has no triggers).
CREATE TRIGGER `push_die_with_task` AFTER DELETE ON `tasks` BEGIN
	DELETE FROM `push_deliveries` WHERE `task_id` = old.`id`;
	DELETE FROM `push_configs` WHERE `task_id` = old.`id`;
END;
