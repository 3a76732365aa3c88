/**
 * Each emulated container's filesystem: an in-memory tree of directories, files and symlinks with
 * modes and modification times, made on the container's first exec and dropped with its pod. What
 * one exec writes (`kubectl cp`, `tar x`, `mkdir`) the next one reads. Bounded in bytes and entries
 * per container, as a disk would be.
 */

/** Bytes of file content one container may hold. */
export const MAX_CONTAINER_BYTES = 32 * 1024 * 1024
/** Files, directories and links one container may hold. */
const MAX_ENTRIES = 20_000

interface FileNode {
  kind: 'file'
  data: Uint8Array
  mode: number
  mtime: number
}
export interface DirNode {
  kind: 'dir'
  children: Map<string, FsNode>
  mode: number
  mtime: number
}
interface LinkNode {
  kind: 'symlink'
  target: string
  mode: number
  mtime: number
}
export type FsNode = FileNode | DirNode | LinkNode

/** Why a write failed, in the words of errno. */
export class FsError extends Error {}
const ENOENT = 'No such file or directory'
const ENOTDIR = 'Not a directory'
const ENOSPC = 'No space left on device'

/** `/a/../b/./c` → `/b/c`, relative paths taken from `/`. */
export function resolvePath(p: string, cwd = '/'): string {
  const parts: string[] = []
  for (const seg of `${p.startsWith('/') ? '' : `${cwd}/`}${p}`.split('/')) {
    if (!seg || seg === '.') continue
    if (seg === '..') parts.pop()
    else parts.push(seg)
  }
  return `/${parts.join('/')}`
}

const segments = (path: string) => resolvePath(path).split('/').filter(Boolean)

export class ContainerFs {
  private readonly root: DirNode
  private bytes = 0
  private entries = 0

  /** `commands` appear in /bin as executables. */
  constructor(hostname: string, commands: readonly string[], now = Date.now()) {
    this.root = { kind: 'dir', children: new Map(), mode: 0o755, mtime: now }
    for (const dir of [
      '/app',
      '/bin',
      '/dev',
      '/etc',
      '/home',
      '/proc',
      '/root',
      '/sys',
      '/usr/bin',
      '/usr/lib',
      '/usr/local',
      '/var/log',
      '/var/run',
    ])
      this.mkdirs(dir, 0o755)
    this.mkdirs('/tmp', 0o1777)
    const file = (path: string, text: string, mode = 0o644) => this.writeFile(path, new TextEncoder().encode(text), mode)
    file('/app/config.yaml', 'listen: :8080\nlogLevel: info\n')
    file('/app/server', '', 0o755)
    for (const name of commands) file(`/bin/${name}`, '', 0o755)
    file('/etc/hostname', `${hostname}\n`)
    file('/etc/hosts', `127.0.0.1\tlocalhost\n10.244.0.10\t${hostname}\n`)
    file(
      '/etc/os-release',
      'NAME="Emulated Linux"\nID=emulated\nVERSION_ID=1.0\nPRETTY_NAME="Emulated Linux 1.0 (platform-api kube emulator)"\n',
    )
    file('/etc/resolv.conf', 'search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n')
    for (const name of ['null', 'stdin', 'stdout', 'stderr']) file(`/dev/${name}`, '', 0o666)
    for (const name of ['cpuinfo', 'meminfo']) file(`/proc/${name}`, '', 0o444)
    this.mkdirs('/proc/1', 0o555)
  }

  /** The node at `path` (symlinks not followed), or undefined. */
  lookup(path: string): FsNode | undefined {
    let node: FsNode = this.root
    for (const name of segments(path)) {
      if (node.kind !== 'dir') return undefined
      const next = node.children.get(name)
      if (!next) return undefined
      node = next
    }
    return node
  }

  /** The directory `path` names; throws ENOENT or ENOTDIR. */
  private dirAt(path: string): DirNode {
    const node = this.lookup(path)
    if (!node) throw new FsError(ENOENT)
    if (node.kind !== 'dir') throw new FsError(ENOTDIR)
    return node
  }

  private parentOf(path: string): { dir: DirNode; name: string } {
    const parts = segments(path)
    const name = parts.pop()
    if (!name) throw new FsError('Invalid argument')
    return { dir: this.dirAt(`/${parts.join('/')}`), name }
  }

  /** Puts `node` at `path`, replacing a file or link there (a directory stays: writing over one is EISDIR). */
  private place(path: string, node: FsNode): void {
    const { dir, name } = this.parentOf(path)
    const old = dir.children.get(name)
    if (old?.kind === 'dir') throw new FsError('Is a directory')
    const grow = (node.kind === 'file' ? node.data.length : 0) - (old?.kind === 'file' ? old.data.length : 0)
    if (this.bytes + grow > MAX_CONTAINER_BYTES || (!old && this.entries >= MAX_ENTRIES)) throw new FsError(ENOSPC)
    this.bytes += grow
    if (!old) this.entries++
    dir.children.set(name, node)
    dir.mtime = node.mtime
  }

  writeFile(path: string, data: Uint8Array, mode = 0o644, mtime = Date.now()): void {
    this.place(path, { kind: 'file', data, mode: mode & 0o7777, mtime })
  }

  symlink(path: string, target: string, mtime = Date.now()): void {
    this.place(path, { kind: 'symlink', target, mode: 0o777, mtime })
  }

  /** `mkdir -p`: creates what is missing; an existing directory at `path` takes `mode`. Throws ENOTDIR, ENOSPC. */
  mkdirs(path: string, mode = 0o755, mtime = Date.now()): void {
    let dir = this.root
    const parts = segments(path)
    parts.forEach((name, i) => {
      const last = i === parts.length - 1
      let next = dir.children.get(name)
      if (!next) {
        if (this.entries >= MAX_ENTRIES) throw new FsError(ENOSPC)
        next = { kind: 'dir', children: new Map(), mode: last ? mode & 0o7777 : 0o755, mtime }
        dir.children.set(name, next)
        this.entries++
      } else if (next.kind !== 'dir') throw new FsError(ENOTDIR)
      else if (last) next.mode = mode & 0o7777
      dir = next
    })
  }

  /** Creates one directory; its parent must exist. Throws ENOENT, ENOTDIR, EEXIST. */
  mkdir(path: string, mode = 0o755): void {
    const { dir, name } = this.parentOf(path)
    if (dir.children.has(name)) throw new FsError('File exists')
    this.mkdirs(path, mode)
  }

  /** Removes `path`; a non-empty directory only when `recursive`. Throws ENOENT, ENOTEMPTY. */
  remove(path: string, recursive: boolean): void {
    const { dir, name } = this.parentOf(path)
    const node = dir.children.get(name)
    if (!node) throw new FsError(ENOENT)
    if (node.kind === 'dir' && node.children.size && !recursive) throw new FsError('Directory not empty')
    const freed = this.measure(node)
    this.bytes -= freed.bytes
    this.entries -= freed.entries
    dir.children.delete(name)
  }

  private measure(node: FsNode): { bytes: number; entries: number } {
    if (node.kind !== 'dir') return { bytes: node.kind === 'file' ? node.data.length : 0, entries: 1 }
    const total = { bytes: 0, entries: 1 }
    for (const child of node.children.values()) {
      const sub = this.measure(child)
      total.bytes += sub.bytes
      total.entries += sub.entries
    }
    return total
  }

  chmod(path: string, mode: number): void {
    const node = this.lookup(path)
    if (!node) throw new FsError(ENOENT)
    node.mode = mode & 0o7777
  }

  /** The file's content, following one level of symlink; throws ENOENT or EISDIR. */
  readFile(path: string): Uint8Array {
    let node = this.lookup(path)
    if (node?.kind === 'symlink') node = this.lookup(resolvePath(node.target, resolvePath(`${path}/..`)))
    if (!node) throw new FsError(ENOENT)
    if (node.kind !== 'file') throw new FsError('Is a directory')
    return node.data
  }
}

/** The filesystems of a cluster's containers, by pod uid and container name. */
export class ContainerFilesystems {
  private readonly byContainer = new Map<string, ContainerFs>()

  /** `commands`: what the containers' /bin holds. */
  constructor(private readonly commands: readonly string[]) {}

  of(uid: string, container: string, hostname: string): ContainerFs {
    const key = `${uid}/${container}`
    let fs = this.byContainer.get(key)
    if (!fs) this.byContainer.set(key, (fs = new ContainerFs(hostname, this.commands)))
    return fs
  }

  forget(uid: string): void {
    for (const key of this.byContainer.keys()) if (key.startsWith(`${uid}/`)) this.byContainer.delete(key)
  }
}
