/** Words for a schema's problems with a request body, shared by the bodies' checks (tasks, storage proof). */

/** "a string", "an object", "a whole number": what a field must be. */
export function article(expected: string): string {
  if (expected === 'array') return 'an array'
  if (expected === 'object' || expected === 'record') return 'an object'
  if (expected === 'int' || expected === 'integer') return 'a whole number'
  return `a ${expected}`
}

/** A value as a message shows it: short, and never more than 80 characters of a string. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)
  if (typeof value === 'object') return 'an object'
  return `${typeof value} ${String(value)}`
}
