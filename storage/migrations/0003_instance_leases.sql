CREATE TABLE `instance_leases` (
	`instance_id` text PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`state_key` text NOT NULL,
	`holder` text NOT NULL,
	`expires_at` integer NOT NULL
);
