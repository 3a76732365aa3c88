PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_msgbus_accounts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`account_type` text NOT NULL,
	`msgbus_pub_key` text NOT NULL,
	`account` text NOT NULL,
	`cluster_id` text DEFAULT '' NOT NULL,
	`product_name` text DEFAULT '' NOT NULL,
	`issued_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`revoked_at` integer
);
--> statement-breakpoint
INSERT INTO `__new_msgbus_accounts`("id", "uid", "account_type", "msgbus_pub_key", "account", "cluster_id", "product_name", "issued_at", "expires_at", "revoked_at") SELECT "id", "uid", "account_type", "msgbus_pub_key", "account", "cluster_id", "product_name", "issued_at", "expires_at", "revoked_at" FROM `msgbus_accounts`;--> statement-breakpoint
DROP TABLE `msgbus_accounts`;--> statement-breakpoint
ALTER TABLE `__new_msgbus_accounts` RENAME TO `msgbus_accounts`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `msgbus_accounts_uid` ON `msgbus_accounts` (`uid`);--> statement-breakpoint
CREATE INDEX `msgbus_accounts_account` ON `msgbus_accounts` (`account`);