/**
 * Folder-level layering of src/ (issue 9), checked by `npm test`:
 * - no cycles between folders (src/identity → src/http → src/identity fails, type-only imports included);
 * - the base layers (http/, storage/, authz/) never import an area: they receive what they need
 *   from areas through Deps (credential checking, org facts), wired in app.ts.
 * The neutral modules at the top of src/ (config, deps, errors, logger) sit below everything.
 * - each area reads and writes only its own tables: it imports only the schema files it owns (TABLE_OWNERS);
 *   another area's data comes through that area's module (a function, or a read-only subquery to join on such as
 *   identity's `accounts`), or through Deps when the owner sits above (identity asks orgs, orgs tells inbox).
 */
const AREAS = '(identity|orgs|clusters|cloud|inbox|msgbus|orders|usage|system|kube-emulator|audit|singletons)'

/**
 * The area that owns the tables of each file in db/schema/ (by file name). An area imports only its own files,
 * plus `codes` (the values of coded columns, no tables), which any module may. storage/ opens the database
 * with the whole schema (`index`). A row type of any file may be named anywhere (a type-only import queries
 * nothing). A new schema file needs an owner here, or nothing may import it.
 */
const TABLE_OWNERS = {
  audit: ['audit'],
  identity: ['identity', 'security', 'sign-in', 'shared-files'],
  orgs: ['orgs', 'sso'],
  clusters: ['clusters'],
  cloud: ['cloud'],
  inbox: ['inbox'],
  msgbus: ['msgbus'],
  orders: ['orders'],
  usage: ['usage'],
  singletons: ['singletons'],
  storage: ['index', 'shared-files'],
}

const schemaFiles = (names) => `^db/schema/(${names.join('|')})[.]ts$`
const ownTables = Object.entries(TABLE_OWNERS).map(([area, files]) => ({
  name: `${area}-own-tables`,
  comment: `src/${area}/ reads and writes only its own tables (${files.join(', ')}): ask the owning area for other data.`,
  severity: 'error',
  from: { path: `^src/${area}/` },
  to: { path: '^db/schema/', pathNot: schemaFiles([...files, 'codes']), dependencyTypesNot: ['type-only'] },
}))
const OWNING_AREAS = `^src/(${Object.keys(TABLE_OWNERS).join('|')})/`

module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycles',
      comment: 'Folders import each other one way only; break the cycle by moving the shared piece down or injecting it through Deps.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'base-imports-no-area',
      comment: 'http/, storage/ and authz/ know no area: declare an interface there and let the area implement it (see Deps).',
      severity: 'error',
      from: { path: '^src/(http|storage|authz)/' },
      to: { path: `^src/${AREAS}/` },
    },
    ...ownTables,
    {
      name: 'no-tables-outside-an-area',
      comment: 'A module of no owning area (TABLE_OWNERS) touches no table: import codes, or a row type (type-only).',
      severity: 'error',
      from: { path: '^src/', pathNot: OWNING_AREAS },
      to: { path: '^db/schema/', pathNot: schemaFiles(['codes']), dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: a type can close a cycle as well as a value.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
  },
}
