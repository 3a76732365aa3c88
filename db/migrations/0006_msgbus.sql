CREATE TABLE `fleetmgr_sync_tokens` (
	`org_id` integer PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`access_key_id` text NOT NULL,
	`sealed_secret` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `org_system_admins` (
	`org_id` integer PRIMARY KEY NOT NULL,
	`uid` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `org_system_admins_uid` ON `org_system_admins` (`uid`);--> statement-breakpoint
CREATE TABLE `msgbus_accounts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`account_type` text NOT NULL,
	`msgbus_pub_key` text NOT NULL,
	`account` text NOT NULL,
	`cluster_id` text DEFAULT '' NOT NULL,
	`product_name` text DEFAULT '' NOT NULL,
	`issued_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `msgbus_accounts_uid` ON `msgbus_accounts` (`uid`);--> statement-breakpoint
CREATE INDEX `msgbus_accounts_account` ON `msgbus_accounts` (`account`);--> statement-breakpoint
CREATE TABLE `msgbus_keys` (
	`name` text PRIMARY KEY NOT NULL,
	`public_key` text NOT NULL,
	`sealed_seed` text NOT NULL,
	`signing_public_key` text DEFAULT '' NOT NULL,
	`sealed_signing_seed` text DEFAULT '' NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL
);
