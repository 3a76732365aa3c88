// Every table of the platform; drizzle-kit reads this file to generate migrations.

export * from './cloud'
export * from './clusters'
export * from './identity'
export * from './inbox'
export * from './msgbus'
export * from './orders'
export * from './orgs'
export * from './security'
export * from './sign-in'
export * from './singletons'
export * from './sso'
export * from './usage'
