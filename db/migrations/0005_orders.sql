CREATE TABLE `chart_sources` (
	`name` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`username` text,
	`sealed_password` text,
	`ca_data` text,
	`insecure_skip_tls_verify` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `orders` (
	`uid` text PRIMARY KEY NOT NULL,
	`owner_id` integer NOT NULL,
	`body` text NOT NULL,
	`resolved` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `orders_owner_created` ON `orders` (`owner_id`,`created_at`);