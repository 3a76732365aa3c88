-- The org system admin is an owner-level, private member of its org (docs/decisions.md §6a): before this
-- version it was in no team, so its tokens authenticated but could do nothing in the org. Every system
-- admin on record joins its org's Owners team with a private membership, and may not create orgs.
INSERT INTO `team_users` (`team_id`, `org_id`, `uid`)
SELECT `teams`.`id`, `org_system_admins`.`org_id`, `org_system_admins`.`uid`
FROM `org_system_admins` JOIN `teams` ON `teams`.`org_id` = `org_system_admins`.`org_id` AND `teams`.`permission` = 'owner'
WHERE true ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO `org_users` (`org_id`, `uid`, `is_public`)
SELECT `org_id`, `uid`, 0 FROM `org_system_admins` WHERE true ON CONFLICT DO NOTHING;
--> statement-breakpoint
UPDATE `users` SET `allow_create_organization` = 0 WHERE `id` IN (SELECT `uid` FROM `org_system_admins`);
