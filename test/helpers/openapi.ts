/**
 * GitHub's published REST description (the `@octokit/openapi` package's api.github.com document,
 * reduced to what the stand-in serves: ./github-openapi.json, written and checked by
 * scripts/github-openapi.ts, which records the package's version) as a judge of requests and answers: find the operation by method and path template, then check
 * path and query parameters, the body's content type and its JSON against the documented schema
 * (types, required fields, enums, nested objects and arrays). The GitHub API stand-in
 * (./github-api.ts) puts every request and every answer it gives through it, so neither the
 * action nor the stand-in can drift from what GitHub documents.
 */
import { createRequire } from 'node:module'

type Schema = {
  $ref?: string
  type?: string | string[]
  nullable?: boolean
  required?: string[]
  properties?: Record<string, Schema>
  items?: Schema
  enum?: unknown[]
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  additionalProperties?: boolean | Schema
}
type Parameter = { $ref?: string; name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: Schema }
type Operation = {
  operationId: string
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema }> }
  responses: Record<string, { $ref?: string; content?: Record<string, { schema?: Schema }> }>
  servers?: { url: string }[]
}
type Document = {
  servers: { url: string }[]
  paths: Record<string, Record<string, Operation>>
  components: Record<string, Record<string, unknown>>
}

export type MatchedOperation = {
  operationId: string
  template: string
  operation: Operation
  pathParams: Record<string, string>
  /** The documented origin of the operation: api.github.com, or uploads.github.com for an upload. */
  server: string
}

const require = createRequire(import.meta.url)
let document: Document | undefined
let routes: { method: string; template: string; pattern: RegExp; names: string[] }[] | undefined

function load(): Document {
  document ??= require('./github-openapi.json') as Document
  return document
}

function resolve<T>(node: T & { $ref?: string }): T {
  let current: unknown = node
  while (current && typeof current === 'object' && typeof (current as { $ref?: unknown }).$ref === 'string') {
    const pointer = (current as { $ref: string }).$ref.replace(/^#\//, '').split('/')
    current = pointer.reduce<unknown>(
      (value, key) => (value as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')],
      load(),
    )
  }
  return current as T
}

/** The operation a request is for; undefined when GitHub documents none. */
export function findOperation(method: string, path: string): MatchedOperation | undefined {
  const doc = load()
  routes ??= Object.entries(doc.paths).flatMap(([template, methods]) =>
    Object.keys(methods)
      .filter((verb) => ['get', 'post', 'put', 'patch', 'delete'].includes(verb))
      .map((verb) => {
        const names: string[] = []
        const source = template
          .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
          .replace(/\\?\{(\w+)\\?\}|\{(\w+)\}/g, (_, a: string, b: string) => {
            names.push(a ?? b)
            return '([^/]+)'
          })
        return { method: verb, template, pattern: new RegExp(`^${source}$`), names }
      }),
  )
  // A literal segment beats a parameter (releases/tags/{tag} over releases/{release_id}/...).
  const candidates = routes
    .filter((route) => route.method === method.toLowerCase() && route.pattern.test(path))
    .sort((a, b) => a.names.length - b.names.length)
  const route = candidates[0]
  if (!route) return undefined
  const values = route.pattern.exec(path)!.slice(1)
  const operation = doc.paths[route.template]![route.method]!
  return {
    operationId: operation.operationId,
    template: route.template,
    operation,
    pathParams: Object.fromEntries(route.names.map((name, index) => [name, decodeURIComponent(values[index]!)])),
    server: (operation.servers ?? doc.servers)[0]!.url,
  }
}

/** What is wrong with a request for this operation (empty when it is as documented). */
export function checkRequest(
  matched: MatchedOperation,
  request: { query: URLSearchParams; contentType: string | undefined; body: Buffer },
): string[] {
  const problems: string[] = []
  const where = `${matched.operationId}`
  for (const raw of matched.operation.parameters ?? []) {
    const parameter = resolve(raw)
    const value =
      parameter.in === 'path'
        ? matched.pathParams[parameter.name]
        : parameter.in === 'query'
          ? (request.query.get(parameter.name) ?? undefined)
          : undefined
    if (parameter.in === 'header') continue
    if (value === undefined || value === '') {
      if (parameter.required)
        problems.push(`${where}: the required ${parameter.in} parameter "${parameter.name}" is missing`)
      continue
    }
    const schema = parameter.schema ? resolve(parameter.schema) : undefined
    if (schema?.type === 'integer' && !/^\d+$/.test(value))
      problems.push(
        `${where}: ${parameter.in} parameter "${parameter.name}" must be an integer, got ${JSON.stringify(value)}`,
      )
    if (schema?.enum && !schema.enum.includes(value))
      problems.push(`${where}: ${parameter.in} parameter "${parameter.name}" must be one of ${schema.enum.join(', ')}`)
  }
  const body = matched.operation.requestBody
  if (!body) {
    if (request.body.length) problems.push(`${where}: documents no request body, got ${request.body.length} bytes`)
    return problems
  }
  if (!request.body.length) {
    if (body.required) problems.push(`${where}: the request body is required`)
    return problems
  }
  const mediaType = request.contentType?.split(';')[0]?.trim().toLowerCase()
  if (!mediaType) return [...problems, `${where}: a body without a content-type`]
  const content = body.content['application/json']
  if (!content) {
    // A binary upload (application/octet-stream documented): any declared media type is the asset's.
    return problems
  }
  if (mediaType !== 'application/json')
    return [...problems, `${where}: the body must be application/json, got ${mediaType}`]
  let parsed: unknown
  try {
    parsed = JSON.parse(request.body.toString('utf8'))
  } catch {
    return [...problems, `${where}: the body is not JSON`]
  }
  if (content.schema) problems.push(...checkValue(parsed, content.schema, `${where} body`))
  return problems
}

/** What is wrong with an answer (the stand-in's own) against the documented response. */
export function checkResponse(matched: MatchedOperation, status: number, body: unknown): string[] {
  const response = matched.operation.responses[String(status)]
  if (!response) return [`${matched.operationId}: GitHub documents no ${status} answer`]
  const schema = resolve(response).content?.['application/json']?.schema
  if (!schema) return body === undefined ? [] : [`${matched.operationId}: the ${status} answer documents no body`]
  return checkValue(body, schema, `${matched.operationId} ${status} answer`)
}

/** A JSON value against an OpenAPI 3.0 schema: types, nullability, required, enums, nesting. */
export function checkValue(value: unknown, raw: Schema, where: string): string[] {
  const schema = resolve(raw)
  if (schema.allOf) return schema.allOf.flatMap((part) => checkValue(value, part, where))
  const alternatives = schema.anyOf ?? schema.oneOf
  if (alternatives) {
    const results = alternatives.map((part) => checkValue(value, part, where))
    return results.some((result) => result.length === 0)
      ? []
      : [`${where}: matches none of the documented alternatives (${results.map((r) => r[0]).join(' / ')})`]
  }
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type]
  if (value === null)
    return schema.nullable || types.includes('null') ? [] : types.length ? [`${where}: null is not allowed`] : []
  if (types.length && !types.some((type) => isType(value, type)))
    return [`${where}: must be ${types.join(' or ')}, got ${JSON.stringify(value)?.slice(0, 60)}`]
  if (schema.enum && !schema.enum.includes(value))
    return [`${where}: must be one of ${schema.enum.join(', ')}, got ${JSON.stringify(value)}`]
  const problems: string[] = []
  if (Array.isArray(value) && schema.items) {
    for (const [index, item] of value.entries()) problems.push(...checkValue(item, schema.items, `${where}[${index}]`))
  }
  if (isObject(value)) {
    for (const name of schema.required ?? [])
      if (!(name in value)) problems.push(`${where}: the required field "${name}" is missing`)
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      if (name in value) problems.push(...checkValue(value[name], property, `${where}.${name}`))
    }
    if (schema.additionalProperties === false) {
      for (const name of Object.keys(value))
        if (!(name in (schema.properties ?? {}))) problems.push(`${where}: "${name}" is not a documented field`)
    }
  }
  return problems
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'integer':
      return Number.isInteger(value)
    case 'number':
      return typeof value === 'number'
    case 'boolean':
      return typeof value === 'boolean'
    case 'array':
      return Array.isArray(value)
    case 'object':
      return isObject(value)
    default:
      return true
  }
}
