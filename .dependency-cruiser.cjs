/**
 * Folder-level layering of src/ (issue 9), checked by `npm test`:
 * - no cycles between folders (src/identity → src/http → src/identity fails, type-only imports included);
 * - the base layers (http/, storage/, authz/) never import an area: they receive what they need
 *   from areas through Deps (credential checking, org facts), wired in app.ts.
 * The neutral modules at the top of src/ (config, deps, errors, logger) sit below everything.
 */
const AREAS = '(identity|orgs|clusters|cloud|inbox|msgbus|orders|usage|system|kube-emulator|sso)'

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
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: a type can close a cycle as well as a value.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
  },
}
