-- Personal message-bus credentials issued before this version may subscribe and publish the shared
-- _INBOX.> of the USERS account, where one user could read or forge another's replies
-- (docs/decisions.md §6a). Every one still on record is revoked now; the platform's account push
-- at start (reconciliation) carries the revocations to nats-server, which drops their connections.
UPDATE `msgbus_accounts` SET `revoked_at` = unixepoch()
WHERE `account` = 'USERS' AND `account_type` = 'user' AND `revoked_at` IS NULL;
