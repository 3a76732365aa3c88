CREATE TABLE `team_clusters` (
	`team_id` integer NOT NULL,
	`cluster_id` integer NOT NULL,
	PRIMARY KEY(`team_id`, `cluster_id`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`cluster_id`) REFERENCES `clusters`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `team_clusters_cluster` ON `team_clusters` (`cluster_id`);--> statement-breakpoint
DROP INDEX `clusters_owner`;--> statement-breakpoint
DROP INDEX `clusters_uid`;--> statement-breakpoint
CREATE UNIQUE INDEX `clusters_owner_uid` ON `clusters` (`owner_id`,`uid`);--> statement-breakpoint
CREATE INDEX `clusters_uid` ON `clusters` (`uid`);