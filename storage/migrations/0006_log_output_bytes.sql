ALTER TABLE `session_log` ADD `output` blob;--> statement-breakpoint
ALTER TABLE `session_log` ADD `frame_id` text;