CREATE TABLE `hosts` (
	`instance_id` text NOT NULL,
	`name` text NOT NULL,
	`token_sha256` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`instance_id`, `name`)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `hosts_token_sha256_unique` ON `hosts` (`token_sha256`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `host` text;