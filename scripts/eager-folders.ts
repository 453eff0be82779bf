/**
 * The folders of `lib/` that `Connection` itself needs: every process that requires acp-wire loads
 * them. Shared by the build steps that run after `tsc` (`lazy-root-index.ts`, `bundle-core.ts`).
 *
 * @packageDocumentation
 */

/** The connection layer and everything below it, by folder under `lib/`. */
export const EAGER_FOLDERS: readonly string[] = ['jsonrpc', 'framing', 'support', 'connection', 'requests', 'gc'];
