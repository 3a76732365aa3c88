CREATE TABLE `oauth2_device_authorizations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`client_id` text NOT NULL,
	`application_id` integer,
	`device_code_hash` text NOT NULL,
	`user_code` text NOT NULL,
	`scopes` text NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`uid` integer,
	`interval_seconds` integer NOT NULL,
	`last_polled_at` integer,
	`expires_at` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `oauth2_applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_device_authorizations_device_code` ON `oauth2_device_authorizations` (`device_code_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_device_authorizations_user_code` ON `oauth2_device_authorizations` (`user_code`);--> statement-breakpoint
ALTER TABLE `access_tokens` ADD `kubeconfig_cluster_id` integer;