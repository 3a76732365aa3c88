// Every table of the platform; drizzle-kit reads this file to generate migrations.
export * from './identity'
export * from './security'
export * from './clusters'
export * from './orgs'
export * from './inbox'
export * from './cloud'
export * from './sso'
export * from './usage'
