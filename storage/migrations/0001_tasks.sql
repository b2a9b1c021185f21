CREATE TABLE `task_artifacts` (
	`task_id` text NOT NULL,
	`artifact_id` text NOT NULL,
	`position` integer NOT NULL,
	`artifact` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`task_id`, `artifact_id`)
);
--> statement-breakpoint
CREATE TABLE `task_messages` (
	`task_id` text NOT NULL,
	`position` integer NOT NULL,
	`message_id` text NOT NULL,
	`message` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`task_id`, `position`)
);
