// Files imported `with { type: 'file' }`: the import is the file's path (the checkout's, or the copy
// embedded in the built binary).
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string
  export default path
}
