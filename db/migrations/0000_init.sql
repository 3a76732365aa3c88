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
CREATE TABLE `email_addresses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`email` text NOT NULL,
	`lower_email` text NOT NULL,
	`is_activated` integer DEFAULT true NOT NULL,
	`is_primary` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `email_addresses_lower_email` ON `email_addresses` (`lower_email`);--> statement-breakpoint
CREATE INDEX `email_addresses_uid` ON `email_addresses` (`uid`);--> statement-breakpoint
CREATE TABLE `follows` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`follow_id` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`follow_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `follows_pair` ON `follows` (`user_id`,`follow_id`);--> statement-breakpoint
CREATE INDEX `follows_follow_id` ON `follows` (`follow_id`);--> statement-breakpoint
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
CREATE TABLE `external_login_users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`source_id` integer NOT NULL,
	`provider` text NOT NULL,
	`source_name` text DEFAULT '' NOT NULL,
	`external_id` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `external_login_users_source_external` ON `external_login_users` (`source_id`,`external_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `external_login_users_uid_source` ON `external_login_users` (`uid`,`source_id`);--> statement-breakpoint
CREATE TABLE `oauth2_applications` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`name` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_hash` text NOT NULL,
	`redirect_uris` text NOT NULL,
	`confidential_client` integer DEFAULT true NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_applications_client_id` ON `oauth2_applications` (`client_id`);--> statement-breakpoint
CREATE INDEX `oauth2_applications_uid` ON `oauth2_applications` (`uid`);--> statement-breakpoint
CREATE TABLE `oauth2_authorization_codes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`application_id` integer NOT NULL,
	`uid` integer NOT NULL,
	`code_hash` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`scopes` text NOT NULL,
	`code_challenge` text DEFAULT '' NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`application_id`) REFERENCES `oauth2_applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_authorization_codes_hash` ON `oauth2_authorization_codes` (`code_hash`);--> statement-breakpoint
CREATE TABLE `oauth2_grants` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`application_id` integer NOT NULL,
	`uid` integer NOT NULL,
	`code_id` integer,
	`scopes` text NOT NULL,
	`access_hash` text NOT NULL,
	`access_expires_at` integer NOT NULL,
	`refresh_hash` text NOT NULL,
	`refresh_expires_at` integer NOT NULL,
	`previous_refresh_hash` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `oauth2_applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_grants_access` ON `oauth2_grants` (`access_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_grants_refresh` ON `oauth2_grants` (`refresh_hash`);--> statement-breakpoint
CREATE INDEX `oauth2_grants_previous_refresh` ON `oauth2_grants` (`previous_refresh_hash`);--> statement-breakpoint
CREATE INDEX `oauth2_grants_code` ON `oauth2_grants` (`code_id`);--> statement-breakpoint
CREATE TABLE `two_factor_enrollments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`sealed_secret` text NOT NULL,
	`failed_attempts` integer DEFAULT 0 NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `two_factor_enrollments_uid` ON `two_factor_enrollments` (`uid`);--> statement-breakpoint
CREATE TABLE `two_factors` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`sealed_secret` text NOT NULL,
	`scratch_hash` text DEFAULT '' NOT NULL,
	`last_used_step` integer DEFAULT 0 NOT NULL,
	`failed_attempts` integer DEFAULT 0 NOT NULL,
	`locked_until` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `two_factors_uid` ON `two_factors` (`uid`);--> statement-breakpoint
CREATE TABLE `webauthn_challenges` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`challenge` text NOT NULL,
	`name` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webauthn_challenges_uid` ON `webauthn_challenges` (`uid`);--> statement-breakpoint
CREATE TABLE `webauthn_credentials` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`name` text NOT NULL,
	`credential_id` text NOT NULL,
	`public_key` text NOT NULL,
	`sign_count` integer DEFAULT 0 NOT NULL,
	`transports` text DEFAULT '' NOT NULL,
	`aaguid` text DEFAULT '' NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webauthn_credentials_credential_id` ON `webauthn_credentials` (`credential_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `webauthn_credentials_uid_name` ON `webauthn_credentials` (`uid`,`name`);--> statement-breakpoint
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
CREATE INDEX `clusters_owner` ON `clusters` (`owner_id`);--> statement-breakpoint
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