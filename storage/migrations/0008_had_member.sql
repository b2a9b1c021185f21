ALTER TABLE `sessions` ADD `had_member` integer DEFAULT false NOT NULL;--> statement-breakpoint
-- A session that started before this column existed may have had members: its first rejoiner is not given controller.
UPDATE `sessions` SET `had_member` = true WHERE `state` <> 'created';