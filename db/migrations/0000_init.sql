CREATE TABLE `access_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_last_eight` text NOT NULL,
	`scopes` text DEFAULT 'all' NOT NULL,
	`expires_at` integer,
	`last_used_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `access_tokens_hash` ON `access_tokens` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `access_tokens_uid_name` ON `access_tokens` (`uid`,`name`);--> statement-breakpoint
CREATE INDEX `access_tokens_last_eight` ON `access_tokens` (`token_last_eight`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`sid` text NOT NULL,
	`uid` integer NOT NULL,
	`secret_hash` text NOT NULL,
	`csrf_token` text NOT NULL,
	`ip` text DEFAULT '' NOT NULL,
	`user_agent` text DEFAULT '' NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_sid` ON `sessions` (`sid`);--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_secret` ON `sessions` (`secret_hash`);--> statement-breakpoint
CREATE INDEX `sessions_uid` ON `sessions` (`uid`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`lower_name` text NOT NULL,
	`full_name` text DEFAULT '' NOT NULL,
	`email` text DEFAULT '' NOT NULL,
	`keep_email_private` integer DEFAULT false NOT NULL,
	`password_hash` text DEFAULT '' NOT NULL,
	`must_change_password` integer DEFAULT false NOT NULL,
	`type` integer DEFAULT 0 NOT NULL,
	`is_admin` integer DEFAULT false NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`prohibit_login` integer DEFAULT false NOT NULL,
	`allow_create_organization` integer DEFAULT true NOT NULL,
	`visibility` integer DEFAULT 0 NOT NULL,
	`location` text DEFAULT '' NOT NULL,
	`website` text DEFAULT '' NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`language` text DEFAULT '' NOT NULL,
	`avatar` text DEFAULT '' NOT NULL,
	`avatar_link` text DEFAULT '' NOT NULL,
	`page_size` integer DEFAULT 0 NOT NULL,
	`last_login_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_lower_name` ON `users` (`lower_name`);--> statement-breakpoint
CREATE INDEX `users_type` ON `users` (`type`);--> statement-breakpoint
CREATE TABLE `two_factors` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`sealed_secret` text NOT NULL,
	`scratch_hash` text DEFAULT '' NOT NULL,
	`last_used_step` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `two_factors_uid` ON `two_factors` (`uid`);--> statement-breakpoint
CREATE TABLE `clusters` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` text NOT NULL,
	`owner_id` integer NOT NULL,
	`name` text NOT NULL,
	`lower_name` text NOT NULL,
	`display_name` text DEFAULT '' NOT NULL,
	`provider` text DEFAULT 'Generic' NOT NULL,
	`vendor` text DEFAULT '' NOT NULL,
	`location` text DEFAULT '' NOT NULL,
	`hub_cluster_name` text DEFAULT '' NOT NULL,
	`cluster_set_name` text DEFAULT '' NOT NULL,
	`is_monitoring_cluster` integer DEFAULT false NOT NULL,
	`server` text NOT NULL,
	`ca_data` text DEFAULT '' NOT NULL,
	`tls_server_name` text DEFAULT '' NOT NULL,
	`insecure_skip_tls_verify` integer DEFAULT false NOT NULL,
	`sealed_credential` text NOT NULL,
	`impersonate` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `clusters_uid` ON `clusters` (`uid`);--> statement-breakpoint
CREATE UNIQUE INDEX `clusters_owner_name` ON `clusters` (`owner_id`,`lower_name`);--> statement-breakpoint
CREATE INDEX `clusters_owner` ON `clusters` (`owner_id`);