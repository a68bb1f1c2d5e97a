import type { BodyContext } from '../../src/core/http.ts'

/** A request body factory that keeps every body it makes, so a test can inspect what was sent. */
export function recordBodies<B>(make: (context: BodyContext) => B): { body: (context: BodyContext) => B; bodies: B[] } {
  const bodies: B[] = []
  return {
    bodies,
    body: (context) => {
      const body = make(context)
      bodies.push(body)
      return body
    },
  }
}
