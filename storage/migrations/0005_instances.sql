CREATE TABLE `instances` (
	`instance_id` text PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`base_url` text NOT NULL,
	`version` text NOT NULL,
	`started_at` text NOT NULL,
	`last_seen_at` integer NOT NULL,
	`heartbeat_ms` integer NOT NULL,
	`stopped_at` integer
);
