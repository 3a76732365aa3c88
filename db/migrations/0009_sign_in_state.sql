CREATE TABLE `sign_in_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account` text NOT NULL,
	`address` text NOT NULL,
	`expires_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sign_in_attempts_account` ON `sign_in_attempts` (`account`,`address`);--> statement-breakpoint
CREATE INDEX `sign_in_attempts_address` ON `sign_in_attempts` (`address`);--> statement-breakpoint
CREATE TABLE `sign_in_failures` (
	`kind` text NOT NULL,
	`account` text NOT NULL,
	`address` text NOT NULL,
	`failures` integer NOT NULL,
	`resets_at_ms` integer NOT NULL,
	PRIMARY KEY(`kind`, `account`, `address`)
);
--> statement-breakpoint
CREATE INDEX `sign_in_failures_resets_at` ON `sign_in_failures` (`resets_at_ms`);--> statement-breakpoint
CREATE TABLE `sign_in_known_addresses` (
	`account` text NOT NULL,
	`address` text NOT NULL,
	`until_ms` integer NOT NULL,
	PRIMARY KEY(`account`, `address`)
);
--> statement-breakpoint
CREATE INDEX `sign_in_known_addresses_until` ON `sign_in_known_addresses` (`until_ms`);--> statement-breakpoint
CREATE TABLE `sign_in_tickets` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`uid` integer NOT NULL,
	`remember` integer NOT NULL,
	`expires_at_ms` integer NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`challenge` text,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sign_in_tickets_expires_at` ON `sign_in_tickets` (`expires_at_ms`);--> statement-breakpoint
CREATE INDEX `sign_in_tickets_uid` ON `sign_in_tickets` (`uid`);