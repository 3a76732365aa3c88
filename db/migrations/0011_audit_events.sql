CREATE TABLE `audit_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`time` integer NOT NULL,
	`request_id` text NOT NULL,
	`kind` text NOT NULL,
	`actor_id` integer,
	`actor_login` text,
	`real_login` text,
	`subject_id` integer,
	`credential_kind` text NOT NULL,
	`credential_name` text,
	`credential_id` integer,
	`source_address` text NOT NULL,
	`org_id` integer,
	`org` text,
	`cluster` text,
	`status` integer NOT NULL,
	`result` text NOT NULL,
	`method` text,
	`route` text,
	`target` text,
	`verb` text,
	`object_ref` text,
	`command` text,
	`exit_code` integer,
	`end_time` integer
);
--> statement-breakpoint
CREATE INDEX `audit_events_time` ON `audit_events` (`time`);--> statement-breakpoint
CREATE INDEX `audit_events_org_time` ON `audit_events` (`org_id`,`time`);--> statement-breakpoint
CREATE INDEX `audit_events_actor_time` ON `audit_events` (`actor_id`,`time`);--> statement-breakpoint
CREATE INDEX `audit_events_subject_time` ON `audit_events` (`subject_id`,`time`);