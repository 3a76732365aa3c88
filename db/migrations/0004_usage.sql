-- Hand edit: the event and integral tables are WITHOUT ROWID (their key is the row; halves the bulk ingest cost).
CREATE TABLE `usage_contracts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`product` text NOT NULL,
	`kind` text NOT NULL,
	`start_at` integer NOT NULL,
	`end_at` integer,
	`cluster_uids` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `usage_contracts_org` ON `usage_contracts` (`org_id`,`product`);--> statement-breakpoint
CREATE TABLE `usage_events` (
	`object_id` integer NOT NULL,
	`at` integer NOT NULL,
	`rank` integer NOT NULL,
	`cpu_millis` integer,
	`memory_bytes` integer,
	`prod` integer NOT NULL,
	PRIMARY KEY(`object_id`, `at`, `rank`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `usage_months` (
	`org_id` integer NOT NULL,
	`month` integer NOT NULL,
	PRIMARY KEY(`org_id`, `month`),
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `usage_object_days` (
	`object_id` integer NOT NULL,
	`day` integer NOT NULL,
	`active_ms` integer NOT NULL,
	`events` integer NOT NULL,
	`cpu` real NOT NULL,
	`mem` real NOT NULL,
	`bill_cpu` real NOT NULL,
	`bill_mem` real NOT NULL,
	PRIMARY KEY(`object_id`, `day`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `usage_object_months` (
	`object_id` integer NOT NULL,
	`month` integer NOT NULL,
	`active_ms` integer NOT NULL,
	`events` integer NOT NULL,
	`cpu_prod` real NOT NULL,
	`cpu_nonprod` real NOT NULL,
	`mem_prod` real NOT NULL,
	`mem_nonprod` real NOT NULL,
	`bill_cpu_prod` real NOT NULL,
	`bill_cpu_nonprod` real NOT NULL,
	`bill_mem_prod` real NOT NULL,
	`bill_mem_nonprod` real NOT NULL,
	PRIMARY KEY(`object_id`, `month`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `usage_objects` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`product` text NOT NULL,
	`uid` text NOT NULL,
	`cluster_uid` text NOT NULL,
	`cluster_name` text NOT NULL,
	`namespace_uid` text NOT NULL,
	`namespace` text NOT NULL,
	`api_group` text NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`first_at` integer NOT NULL,
	`last_at` integer NOT NULL,
	`last_rank` integer NOT NULL,
	`last_cpu_millis` integer,
	`last_memory_bytes` integer,
	`last_prod` integer NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `usage_objects_org_uid` ON `usage_objects` (`org_id`,`uid`);--> statement-breakpoint
CREATE INDEX `usage_objects_org_product` ON `usage_objects` (`org_id`,`product`,`last_at`);