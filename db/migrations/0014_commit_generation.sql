-- The count of commits whose rows processes may cache (docs/operations.md, "Several processes"):
-- every write but the audit trail's batches adds one, and each process sharing the database
-- empties its caches when it sees the count move. It replaces SQLite's data_version, which moves
-- with the audit trail's commits too and emptied every cache many times a second.
CREATE TABLE `commit_generation` (
	`id` integer PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `commit_generation` (`id`, `generation`) VALUES (1, 0);
