/** What request handlers share: the emulator's context, the parsed request, and the virtual-resource contract. */
import type { Server, ServerWebSocket } from 'bun'
import type { ResourcePath } from '../kube'
import type { ContainerOutputs } from './container-output'
import type { ContainerFilesystems } from './filesystem'
import type { UserSpec } from './rbac'
import type { Registry, Resource } from './registry'

/** Everything a request handler may need, built once per emulator by `startEmulator`. */
export interface EmulatorContext {
  registry: Registry
  users: ReadonlyMap<string, UserSpec>
  /**
   * Under mutual TLS, the user of a request without a bearer token: the TLS layer only lets in
   * clients whose certificate the emulator's CA signed (Bun does not hand the certificate over).
   */
  certificateUser?: UserSpec
  virtual: ReadonlyMap<string, VirtualHandler>
  bookmarkIntervalMs: number
  tooLargeResourceVersionWaitMs: number
  logIntervalMs: number
  /** The time container logs are read against (EmulatorOptions.clock). */
  clock: () => number
  /** What run-to-completion pods printed, for their logs. */
  outputs: ContainerOutputs
  /** Each container's files, which execs (and `kubectl cp`) read and write. */
  filesystems: ContainerFilesystems
  /** How long an exec session holds its command's output for the client to set up its streams. */
  execStartDelayMs: number
  serverAddress: () => string
  log?: (line: string) => void
}

/** A parsed resource request, as the apiserver's RequestInfo: the target and the verb. */
export interface RequestInfo extends ResourcePath {
  verb: string
}

/** One authorized request to a stored resource, as every verb and subresource handler receives it. */
export interface Call {
  ctx: EmulatorContext
  req: Request
  url: URL
  info: RequestInfo
  r: Resource
  server: Server<WebSocketSession>
}

/** What an upgraded connection (exec, attach, port-forward) does with its WebSocket's events. */
export interface WebSocketSession {
  open(ws: ServerWebSocket<WebSocketSession>): void
  receive(message: string | Buffer): void
  closed(): void
}

/** What a virtual resource's handler gets; it answers a JSON body and a status code. */
export interface VirtualRequest {
  info: RequestInfo
  resource: Resource
  user: UserSpec
  query: URLSearchParams
  body: unknown
  /** The stored objects (what the authorizer reads of RBAC). */
  registry: Registry
}
export type VirtualHandler = (req: VirtualRequest) => { code: number; body: unknown }
