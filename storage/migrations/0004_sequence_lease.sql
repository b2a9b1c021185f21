ALTER TABLE `sessions` ADD `sequence_ceiling` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `skipped_sequences` integer DEFAULT 0 NOT NULL;