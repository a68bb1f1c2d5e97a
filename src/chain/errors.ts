/**
 * A library's error as a cause we can keep. RPC clients put the request URL in their messages
 * (viem: "URL: https://.../v3/<key>"), and `util.inspect`, loggers and `walk()` all reach the
 * cause chain; so the chain keeps a scrubbed copy (name, code, message) instead of the original.
 */
export function sanitizedCause(error: unknown, scrub: (text: string) => string): Error | undefined {
  if (error === undefined || error === null) return undefined
  const original = error instanceof Error ? error : new Error(String(error))
  const copy = new Error(scrub(original.message))
  copy.name = original.name
  const code = (original as { code?: unknown }).code
  if (code !== undefined) Object.assign(copy, { code })
  // The stack repeats the message and adds frames of the library: neither helps a user.
  copy.stack = `${copy.name}: ${copy.message}`
  return copy
}
