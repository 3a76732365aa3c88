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
ALTER TABLE `two_factors` ADD `failed_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `two_factors` ADD `locked_until` integer DEFAULT 0 NOT NULL;