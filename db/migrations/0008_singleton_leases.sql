CREATE TABLE `singleton_leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`expires_at_ms` integer NOT NULL
);
