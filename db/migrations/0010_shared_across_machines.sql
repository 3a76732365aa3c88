CREATE TABLE `avatar_images` (
	`name` text PRIMARY KEY NOT NULL,
	`bytes` blob NOT NULL
);
--> statement-breakpoint
CREATE TABLE `deployment_facts` (
	`name` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
