CREATE TABLE `log_losses` (
	`session_id` text NOT NULL,
	`first_sequence` integer NOT NULL,
	`last_sequence` integer NOT NULL,
	`reason` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `first_sequence`)
);
--> statement-breakpoint
ALTER TABLE `sessions` ADD `log_bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE `sessions` SET `log_bytes` = (SELECT coalesce(sum(length(`frame`) + coalesce(length(`output`), 0)), 0) FROM `session_log` WHERE `session_log`.`session_id` = `sessions`.`id`);--> statement-breakpoint
CREATE INDEX `sessions_creator_idx` ON `sessions` (`instance_id`,`created_by`,`state`);