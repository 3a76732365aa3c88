import type { App } from '../../src/app'

/** The permission a route declared through the guard macro (undefined: none declared). */
export function permissionOf(route: App['routes'][number]): string | undefined {
  const value = (route.hooks.detail as Record<string, unknown> | undefined)?.['x-permission']
  return typeof value === 'string' ? value : undefined
}
