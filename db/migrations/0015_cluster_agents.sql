-- Agent clusters (docs/agents.md): an agent token's digest and when an agent was last heard on each
-- cluster, and one row per tunnel an agent holds open to a platform process, which other processes
-- reach through that process's peer listener.
CREATE TABLE `agent_tunnels` (
	`id` text PRIMARY KEY NOT NULL,
	`cluster_id` integer NOT NULL,
	`peer_address` text NOT NULL,
	`agent_version` text DEFAULT '' NOT NULL,
	`source_address` text DEFAULT '' NOT NULL,
	`connected_at` integer NOT NULL,
	`last_seen` integer NOT NULL,
	FOREIGN KEY (`cluster_id`) REFERENCES `clusters`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `agent_tunnels_cluster` ON `agent_tunnels` (`cluster_id`);--> statement-breakpoint
ALTER TABLE `clusters` ADD `agent_token_hash` text;--> statement-breakpoint
ALTER TABLE `clusters` ADD `agent_last_seen` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `clusters_agent_token` ON `clusters` (`agent_token_hash`);