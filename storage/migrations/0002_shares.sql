CREATE TABLE `shares` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`instance_id` text NOT NULL,
	`token_sha256` text NOT NULL,
	`scope` text NOT NULL,
	`label` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shares_token_sha256_unique` ON `shares` (`token_sha256`);--> statement-breakpoint
CREATE INDEX `shares_session_id_idx` ON `shares` (`session_id`);