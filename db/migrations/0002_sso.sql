CREATE TABLE `org_auth_sources` (
	`org_id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`provider` text NOT NULL,
	`client_id` text NOT NULL,
	`sealed_client_secret` text NOT NULL,
	`discovery_url` text DEFAULT '' NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`enforce_for_members` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
DROP INDEX `external_login_users_source_external`;--> statement-breakpoint
ALTER TABLE `external_login_users` ADD `issuer` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `external_login_users_source_issuer_external` ON `external_login_users` (`source_id`,`issuer`,`external_id`);