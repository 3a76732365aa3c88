CREATE TABLE `org_claims` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`claim_id` text NOT NULL,
	`claimed_by` integer,
	`claimed_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`claimed_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `org_claims_claim_id` ON `org_claims` (`claim_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `org_claims_org` ON `org_claims` (`org_id`);--> statement-breakpoint
CREATE TABLE `org_details` (
	`org_id` integer PRIMARY KEY NOT NULL,
	`created_by` integer,
	`created_by_site_admin` integer DEFAULT false NOT NULL,
	`origin` text DEFAULT 'api' NOT NULL,
	`fleetmgr_endpoint` text DEFAULT '' NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE TABLE `org_roles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`name` text NOT NULL,
	`permissions` text DEFAULT '[]' NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `org_roles_org_name` ON `org_roles` (`org_id`,`name`);--> statement-breakpoint
CREATE TABLE `org_users` (
	`org_id` integer NOT NULL,
	`uid` integer NOT NULL,
	`is_public` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	PRIMARY KEY(`org_id`, `uid`),
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `org_users_uid` ON `org_users` (`uid`);--> statement-breakpoint
CREATE TABLE `team_roles` (
	`team_id` integer NOT NULL,
	`role_id` integer NOT NULL,
	PRIMARY KEY(`team_id`, `role_id`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`role_id`) REFERENCES `org_roles`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `team_users` (
	`team_id` integer NOT NULL,
	`org_id` integer NOT NULL,
	`uid` integer NOT NULL,
	PRIMARY KEY(`team_id`, `uid`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `team_users_org_uid` ON `team_users` (`org_id`,`uid`);--> statement-breakpoint
CREATE TABLE `teams` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`name` text NOT NULL,
	`lower_name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`permission` text NOT NULL,
	`units` text DEFAULT '[]' NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `teams_org_lower_name` ON `teams` (`org_id`,`lower_name`);--> statement-breakpoint
CREATE TABLE `inbox_subscriptions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`subscriber_id` integer NOT NULL,
	`subscriber_type` text DEFAULT 'user' NOT NULL,
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`org_id` text DEFAULT '' NOT NULL,
	`org_name` text DEFAULT '' NOT NULL,
	`cluster_owner_id` integer DEFAULT 0 NOT NULL,
	`cluster_uid` text DEFAULT '' NOT NULL,
	`cluster_name` text DEFAULT '' NOT NULL,
	`namespace_uid` text DEFAULT '' NOT NULL,
	`namespace_name` text DEFAULT '' NOT NULL,
	`api_group` text DEFAULT '' NOT NULL,
	`version` text DEFAULT '' NOT NULL,
	`resource` text DEFAULT '' NOT NULL,
	`resource_name` text DEFAULT '' NOT NULL,
	`resource_uid` text DEFAULT '' NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`subscriber_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `inbox_subscriptions_key` ON `inbox_subscriptions` (`subscriber_id`,`key`);--> statement-breakpoint
CREATE INDEX `inbox_subscriptions_org` ON `inbox_subscriptions` (`org_id`);